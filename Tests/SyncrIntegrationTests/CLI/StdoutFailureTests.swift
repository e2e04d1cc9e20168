import Foundation
import Testing

/// A `--json` document that could not be written whole must not pass for one: CI scripts read
/// stdout and trust the exit code. And a reader that goes away early (`| head`) must not cost
/// the run its `--report` and `--junit` files.
@Suite(.timeLimit(.minutes(10)))
struct StdoutFailureTests {
    static let manifest = "version: 1\ndownloads: []\n"

    @Test(arguments: [["plan", "--json"], ["apply", "--json"], ["validate"]])
    func aFullDeviceOnStdoutFailsTheRun(_ arguments: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest)
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let r = try await harness.run(arguments, stdout: full)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("syncr: error: cannot write to standard output: No space left on device"), "\(r.stderr)")
    }

    /// Some CI runners hand over stdout as a non-blocking pipe: a document larger than the
    /// pipe holds was cut at 64 KiB when the reader was slow to start. Python plays the runner
    /// (it sets O_NONBLOCK on the pipe and starts reading two seconds late).
    @Test func aNonBlockingPipeGetsTheWholeDocument() async throws {
        let harness = try CLIHarness()
        var manifest = "version: 1\nuploads:\n"
        for i in 0..<600 { manifest += "  - { from: missing/file-\(i).bin, to: \"http://127.0.0.1:9/u/\(i)\", method: put }\n" }
        try harness.write("syncr.yml", manifest)
        let binary = try #require(CLIHarness.binary)
        let runner = """
            import fcntl, json, os, subprocess, sys, time
            r, w = os.pipe()
            fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
            p = subprocess.Popen([sys.argv[1], "plan", "--json", "syncr.yml"], stdout=w, stderr=subprocess.PIPE)
            os.close(w)
            time.sleep(2)
            data = b""
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
            err = p.stderr.read().decode()
            print(p.wait(), len(data), len(json.loads(data)["items"]), "cannot write" in err)
            """
        let r = try await runProcess(executable: "python3", arguments: ["-c", runner, binary], cwd: URL(fileURLWithPath: harness.folder))
        let fields = r.stdout.split(separator: " ").map(String.init)
        // Exit 1: 600 uploads whose sources are missing cannot be planned.
        #expect(fields.count == 4 && fields[0] == "1" && Int(fields[1])! > 64 << 10 && fields[2] == "600"
                && fields[3].hasPrefix("False"), "\(r.stdout)\(r.stderr)")
    }

    @Test func aReaderThatWentAwayLeavesTheReportFilesWritten() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest)
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let r = try await harness.run(["apply", "--json", "--report", "r.json", "--junit", "j.xml"], stdout: pipe.fileHandleForWriting)
        try pipe.fileHandleForWriting.close()
        #expect(r.status == 1, "an exit code of its own, not a SIGPIPE's 141: \(r.stderr)")
        #expect(r.stderr.contains("cannot write to standard output: Broken pipe"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: harness.folder + "/r.json"))
        #expect(FileManager.default.fileExists(atPath: harness.folder + "/j.xml"))
    }
}
