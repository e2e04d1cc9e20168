#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing

/// The test process's children and descriptors: servers end with it, however it ends, and
/// running processes leaves nothing open behind.
@Suite("server lifetime", .timeLimit(.minutes(5)))
struct ServerLifetimeTests {
    /// Set in the helper process: where it writes the PIDs of the servers it started.
    static let pidFileVariable = "SYNCR_SERVER_LIFETIME_PIDS"

    /// Servers started by a test process that is then SIGKILLed (no cleanup of any kind runs)
    /// are gone soon after, every process of them: the watchdog's lifeline reaches EOF.
    @Test func serversEndWhenTheTestProcessIsKilled() async throws {
        let dir = try TemporaryDirectory(prefix: "lifetime")
        let pidFile = dir.appending("pids")
        let helper = try startHelper(pidFile: pidFile, output: dir.appending("helper.log"))
        let written = await poll(timeout: .seconds(120)) {
            (try? String(contentsOf: pidFile, encoding: .utf8))?.hasSuffix("\n") == true || !helper.isRunning
        }
        let log = (try? String(contentsOf: dir.appending("helper.log"), encoding: .utf8)) ?? ""
        kill(helper.pid, SIGKILL)
        helper.wait(timeout: .seconds(30))
        try #require(written && helper.process.terminationReason == .uncaughtSignal,
                     "the helper should have started the servers and been killed; its output:\n\(log)")
        let lines = try String(contentsOf: pidFile, encoding: .utf8).split(separator: "\n")
        let pids = lines.first.map { $0.split(separator: " ").compactMap { Int32($0) } } ?? []
        // The helper was killed, so it removed none of its folders: they go here, once its
        // servers are gone (or killed below).
        defer {
            for folder in lines.dropFirst() where folder.hasPrefix("/") {
                try? FileManager.default.removeItem(atPath: String(folder))
            }
        }
        #expect(pids.count >= 4, "a watchdog and a server each for nginx and the fault server: \(pids)")
        let gone = await poll(timeout: .seconds(30)) { pids.allSatisfy { !isAlive($0) } }
        let left = pids.filter(isAlive)
        for pid in left { kill(pid, SIGKILL) }
        #expect(gone, "still running after the test process was killed: \(left)")
    }

    /// Not a test of its own: the helper process of the test above starts the servers,
    /// records their PIDs and waits to be killed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[pidFileVariable] != nil))
    func lifetimeHelperStartsServersAndWaits() async throws {
        let pidFile = try #require(ProcessInfo.processInfo.environment[Self.pidFileVariable])
        let root = try TemporaryDirectory(prefix: "lifetime-www")
        let nginx = try await Nginx.start(root: root.url)
        let fault = try await FaultServer.start(root: root.url)
        var pids: [Int32] = []
        for leader in [nginx.processGroup, fault.processGroup] {
            pids += processes(inGroup: leader)
        }
        // Its PIDs, then the folders it made, for the test that kills it to remove.
        let folders = [root.path, nginx.directory.path, fault.directory.path]
        try ([pids.map(String.init).joined(separator: " ")] + folders).map { $0 + "\n" }.joined()
            .write(toFile: pidFile, atomically: true, encoding: .utf8)
        try await Task.sleep(for: .seconds(240))
        withExtendedLifetime((nginx, fault)) {}
    }

    /// Running a process leaves no descriptor open in the test process. (Each run used to
    /// leave the read ends of its two pipes open; a whole suite run passed 1,024 descriptors.)
    @Test func runningProcessesLeavesNoPipesOpen() async throws {
        let before = openPipes()
        for _ in 0..<150 {
            let result = try await runProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2"])
            #expect(result.stdout == "out\n" && result.stderr == "err\n")
        }
        // Tests running meanwhile open pipes of their own, but not 300 of them.
        let grown = openPipes() - before
        #expect(grown < 100, "\(grown) more pipes open after 150 runs")
    }

    func startHelper(pidFile: URL, output: URL) throws -> ChildProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--testing-library", "swift-testing", "--filter", "lifetimeHelperStartsServersAndWaits"]
        process.environment = ProcessInfo.processInfo.environment.merging([Self.pidFileVariable: pidFile.path]) { $1 }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let log = try FileHandle(forWritingTo: output)
        process.standardOutput = log
        process.standardError = log
        try launch(process)
        try? log.close()
        return ChildProcess(process)
    }
}

/// Whether `pid` is a live process (a zombie is not).
func isAlive(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
    return state != "Z" && state != "X"
}

/// The processes whose process group is `leader`.
func processes(inGroup leader: Int32) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap(Int32.init).filter { pid in
        getpgid(pid) == leader
    }.sorted()
}

/// How many pipes this process has open.
func openPipes() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))?.hasPrefix("pipe:") == true
    }.count
}
