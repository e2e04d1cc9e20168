#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing

/// SIGINT and SIGTERM during `syncr apply` and `plan`: transfers stop, what arrived is kept
/// durably, the exit status is 130 or 143, and running the same command again resumes.
///
/// Downloads stall at the fault server after their first MiB, so they are still running when
/// the signal comes however late the test gets to send it; the tests wait for a sign (bytes
/// recorded in the cache, a line on stderr), never for a fixed time.
@Suite("signals", .timeLimit(.minutes(5)))
struct SignalTests {
    static let size = 8 << 20

    /// A project downloading one 8 MiB file from a fault server that sends each connection
    /// 1 MiB and then nothing more until the test resets it: the download cannot finish
    /// before the signal, even when the test process is starved of threads for seconds.
    struct Slow {
        let www: TemporaryDirectory
        let server: FaultServer
        let project: Project

        init(connections: Int) async throws {
            www = try TemporaryDirectory(prefix: "www")
            try makeFile(path: www.appending("big.bin"), size: SignalTests.size, seed: 11)
            server = try await FaultServer.start(root: www.url)
            try await server.behave(path: "/big.bin", FaultBehaviour(stallAfter: 1 << 20))
            project = try Project()
            // A stall shorter than `timeout` is not given up on, so no retry moves things on.
            try project.writeManifest(defaults: "{ retries: 3, timeout: 5m, connections: \(connections), min_split: 1MiB }",
                                      downloads: ["{ url: \(server.url("/big.bin")), to: out/big.bin }"])
        }

        /// Starts `apply` and returns once the cache records bytes of the download.
        func startApply(_ options: [String] = []) async throws -> BackgroundSyncr {
            let run = try BackgroundSyncr(project, ["apply"] + options)
            let underway = await poll(timeout: .seconds(60)) { project.keptBytes() > 0 || !run.child.isRunning }
            try #require(underway && run.child.isRunning, "the download should be under way: \(run.stderr)")
            return run
        }

        /// The same command again, unthrottled: it must resume and leave the exact file.
        func rerunResumes() async throws {
            try await server.reset()
            let kept = project.keptBytes()
            #expect(kept > 0 && kept < SignalTests.size, "a partial download is kept (\(kept) bytes)")
            let plan = try await project.run(["plan", "--json"])
            #expect(plan.exitCode == 0, "\(plan.stderr)")
            let planned = try #require(items(try jsonObject(plan.stdout)).first)
            #expect(planned["action"] as? String == "resume", "\(plan.stdout)")

            let rerun = try await project.run(["apply", "--json"])
            #expect(rerun.exitCode == 0, "\(rerun.stderr)")
            #expect(rerun.stderr.contains("] resume "), "\(rerun.stderr)")
            let result = try #require(items(try jsonObject(rerun.stdout)).first)
            #expect(result["status"] as? String == "ok")
            #expect((result["transferred"] as? Int ?? SignalTests.size) <= SignalTests.size - kept,
                    "only what was missing is fetched")
            #expect(try await sha256(file: project.file("out/big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        }
    }

    /// One connection, and several (the first `bytes=0-` request shared out as it runs).
    @Test(arguments: [1, 4])
    func sigintStopsSavesProgressAndTheRerunResumes(connections: Int) async throws {
        let slow = try await Slow(connections: connections)
        defer { slow.server.stop() }
        let run = try await slow.startApply()
        run.signal(SIGINT)
        let status = await run.finish()
        let stderr = run.stderr
        #expect(status == 130, "\(stderr)")
        #expect(stderr.contains("syncr: interrupted; stopping transfers and saving progress (press Ctrl-C again"))
        #expect(stderr.contains("1 interrupted"), "the summary counts it as interrupted, not failed: \(stderr)")
        #expect(stderr.contains("0 failed"))
        #expect(stderr.contains("interrupted by SIGINT"))
        #expect(stderr.contains("run the same command again to resume"))
        #expect(!slow.project.exists("out/big.bin"), "nothing half-done under the final name")
        try await slow.rerunResumes()
    }

    @Test func sigtermExits143AndTheRerunResumes() async throws {
        let slow = try await Slow(connections: 4)
        defer { slow.server.stop() }
        let run = try await slow.startApply(["--json"])
        run.signal(SIGTERM)
        let status = await run.finish()
        #expect(status == 143, "\(run.stderr)")
        // Fetched without a HEAD, its size came with the answer: the report knows it.
        let report = try jsonObject(run.stdout)
        let item = try #require(items(report).first)
        #expect(item["status"] as? String == "interrupted" && item["size"] as? Int == SignalTests.size, "\(item)")
        #expect((report["totals"] as? [String: Any])?["unknown_sizes"] as? Int == 0, "\(run.stdout)")
        #expect(run.stderr.contains("interrupted by SIGTERM"))
        #expect(run.stderr.contains("(a second SIGTERM or SIGINT quits at once;") && !run.stderr.contains("Ctrl-C"), "\(run.stderr)")
        #expect(run.stderr.contains("run the same command again to resume"))
        try await slow.rerunResumes()
    }

    /// The second Ctrl-C does not wait for the run to wind down; whenever it lands, the cache
    /// stays consistent.
    ///
    /// The orderly end after the first cannot finish: `--json` writes its report to a stdout
    /// pipe that is already full and never read, so the run blocks there. Only the second
    /// signal's immediate exit ends it, before the summary it would print after the report.
    @Test func secondSigintExitsAtOnceAndTheCacheStaysUsable() async throws {
        let slow = try await Slow(connections: 4)
        defer { slow.server.stop() }
        let stdout = try FullPipe()
        let run = try BackgroundSyncr(slow.project, ["apply", "--json"], stdout: stdout.writer)
        let underway = await poll(timeout: .seconds(60)) { slow.project.keptBytes() > 0 || !run.child.isRunning }
        try #require(underway && run.child.isRunning, "the download should be under way: \(run.stderr)")
        run.signal(SIGINT)
        // The first was taken (the notice is out) before the second is sent, so the two are
        // not merged into one pending signal.
        #expect(await run.waitForStderr("stopping transfers"))
        #expect(run.child.isRunning, "the orderly end is held up by the full stdout")
        run.signal(SIGINT)
        let status = await run.finish()
        #expect(status == 130, "\(run.stderr)")
        #expect(!run.stderr.contains("interrupted by SIGINT"), "no orderly end: \(run.stderr)")
        withExtendedLifetime(stdout) {}
        try await slow.rerunResumes()
    }

    /// A pipe whose buffer is full and whose read end stays open and unread: a process that
    /// writes to `writer` blocks (neither EPIPE nor SIGPIPE) until the pipe is gone.
    final class FullPipe {
        let pipe = makePipe()
        var writer: FileHandle { pipe.fileHandleForWriting }

        init() throws {
            let fd = pipe.fileHandleForWriting.fileDescriptor
            let flags = fcntl(fd, F_GETFL)
            // Non-blocking only while filling: the flag belongs to the open file, which the
            // child shares.
            try #require(fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0)
            let block = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            try #require(errno == EAGAIN, "filling the pipe: errno \(errno)")
            try #require(fcntl(fd, F_SETFL, flags) == 0)
        }
    }

    /// A signal during an unpack, the last step, which finishes: every entry is done, and the
    /// run says so rather than to run again (it still exits 130, as interrupted).
    @Test func aSignalDuringTheLastStepSaysNothingIsLeft() async throws {
        let www = try TemporaryDirectory(prefix: "www-unpack-signal")
        let tree = try TemporaryDirectory(prefix: "tree")
        try FileManager.default.createDirectory(at: tree.appending("top"), withIntermediateDirectories: true)
        // 300 MB of zeros: a small archive that takes a moment to unpack.
        let zeros = try await runProcess(executable: "/usr/bin/truncate", arguments: ["-s", "300000000", tree.appending("top/zeros.bin").path])
        try #require(zeros.exitCode == 0)
        let tar = try await runProcess(executable: "tar", arguments: ["-czf", www.appending("z.tar.gz").path, "-C", tree.path, "top"])
        try #require(tar.exitCode == 0, "\(tar.stderr)")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ fsync: false }",
                                  downloads: ["{ url: \(nginx.url("/z.tar.gz")), to: out/z, unzip: true, strip_components: 1 }"])
        try FileManager.default.createDirectory(at: project.file("out"), withIntermediateDirectories: true)
        let run = try BackgroundSyncr(project, ["apply"])
        let out = project.file("out").path
        let unpacking = await pollOnItsOwnThread(timeout: .seconds(60)) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            guard names.contains(where: { $0.hasPrefix(".syncr-unpack-") }) else { return false }
            run.signal(SIGINT)
            return true
        }
        let status = await run.finish()
        try #require(unpacking, "the unpack should be under way: \(run.stderr)")
        #expect(status == 130, "\(run.stderr)")
        #expect(run.stderr.contains("1 downloaded"), "\(run.stderr)")
        #expect(run.stderr.contains("interrupted by SIGINT, after every entry had finished: nothing is left to resume"), "\(run.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: project.file("out/z/zeros.bin").path)[.size] as? Int
        #expect(size == 300_000_000)
    }

    /// `--json` still prints its report, with the entry marked interrupted.
    @Test func interruptedApplyReportsTheEntryAsInterruptedInJSON() async throws {
        let slow = try await Slow(connections: 1)
        defer { slow.server.stop() }
        let run = try BackgroundSyncr(slow.project, ["apply", "--json"])
        let underway = await poll(timeout: .seconds(60)) { slow.project.keptBytes() > 0 || !run.child.isRunning }
        try #require(underway && run.child.isRunning, "\(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.finish() == 130, "\(run.stderr)")
        let report = try jsonObject(run.stdout)
        let item = try #require(items(report).first)
        #expect(item["status"] as? String == "interrupted")
        #expect((item["error"] as? String)?.contains("kept in the cache") == true)
        let totals = try #require(report["totals"] as? [String: Any])
        #expect(totals["interrupted"] as? Int == 1)
        #expect(totals["failed"] as? Int == 0)
    }

    /// An upload cut off by SIGINT is reported interrupted, is not recorded as sent, and the
    /// same command sends it again whole.
    @Test func sigintDuringAnUploadExits130AndTheRerunSendsIt() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        // The server stops reading after 1 MiB, and holds the rest back until it is reset.
        try await server.behave(path: "/app.bin", FaultBehaviour(stallBodyAfter: 1 << 20))
        let project = try Project()
        let size = 16 << 20
        try makeFile(path: project.file("app.bin"), size: size, seed: 31)
        try "version: 1\ndefaults: { retries: 3, timeout: 60s }\nuploads:\n  - { from: app.bin, to: \"\(server.url("/app.bin"))\", method: put }\n"
            .write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)
        let run = try BackgroundSyncr(project, ["apply", "--json"])
        let stalled = try await poll(timeout: .seconds(60)) {
            try await server.stats()["/app.bin"].bytesReceived >= 1 << 20 || !run.child.isRunning
        }
        try #require(stalled && run.child.isRunning, "\(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.finish() == 130, "\(run.stderr)")
        // What left before the signal is counted, not 0.
        let item = try #require(items(try jsonObject(run.stdout)).first)
        #expect(item["status"] as? String == "interrupted" && item["transferred"] as? Int ?? 0 >= 1 << 20, "\(item)")
        #expect(run.stderr.contains("1 interrupted"), "\(run.stderr)")
        #expect(run.stderr.contains("the next run sends it again whole"), "\(run.stderr)")
        #expect(run.stderr.contains("(an upload to an HTTP server that was cut off is sent again whole)."), "\(run.stderr)")
        #expect(try await server.uploads().isEmpty, "the server never got a complete body")

        try await server.reset()
        let rerun = try await project.run(["apply"])
        #expect(rerun.exitCode == 0, "\(rerun.stderr)")
        #expect(try await server.uploads()["app.bin"] == size)
    }

    /// `plan` interrupted while a server keeps it waiting exits 130 and prints no plan.
    @Test func interruptedPlanExits130() async throws {
        let listener = try SilentListener()
        let project = try Project()
        // A timeout far beyond the wait below: plan cannot give up on the server before the signal
        // however late a loaded machine lets the test look (60 s ran out in a full run).
        try project.writeManifest(defaults: "{ retries: 0, timeout: 10m }",
                                  downloads: ["{ url: http://127.0.0.1:\(listener.port)/a.bin, to: a.bin }"])
        let run = try BackgroundSyncr(project, ["plan"])
        // The sign: plan's request reached the server, which never answers. Watched from a thread
        // of its own, which a starved cooperative pool cannot delay.
        let child = run.child
        let asked = await pollOnItsOwnThread(timeout: .seconds(120)) { listener.acceptOne() || !child.isRunning }
        try #require(asked && run.child.isRunning, "plan ended before the signal: \(run.stdout) \(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.finish() == 130, "\(run.stderr)")
        #expect(run.stdout.isEmpty, "no plan is printed: \(run.stdout)")
        // Keep the accepted connection open until the end: released after its last use above,
        // the listener would close it, and a loaded machine could let plan fail before the signal.
        withExtendedLifetime(listener) {}
    }
}

/// A socket on 127.0.0.1 that accepts connections and never answers them.
final class SilentListener: @unchecked Sendable {
    // @unchecked: `accepted` is touched by one caller at a time (the test's task, or the thread
    // it waits on).
    let port: Int
    private let fd: Int32
    private var accepted: [Int32] = []

    init() throws {
        // Close-on-exec: the servers and binaries other tests start must not hold it open.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, SOMAXCONN) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts every waiting connection (a stray one from another test's retries included, so
    /// that none can fill the backlog and get plan's refused); true when any was accepted.
    func acceptOne() -> Bool {
        var any = false
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return any }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            accepted.append(client)
            any = true
        }
    }

    deinit {
        for client in accepted { close(client) }
        close(fd)
    }
}
