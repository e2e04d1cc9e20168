#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport

/// `syncr` running in the background in a project folder, with its stderr readable while it
/// runs: for tests that act on it mid-run (a signal, a second run beside it).
final class BackgroundSyncr: Sendable {
    let child: ChildProcess
    private let stdoutPath: String
    private let stderrPath: String

    /// Starts `syncr ARGS` in the project's folder; `stdout` replaces the file its stdout goes to.
    convenience init(_ project: Project, _ arguments: [String], stdout: FileHandle? = nil) throws {
        try self.init(in: project.folder.url, arguments, stdout: stdout)
    }

    /// Starts `syncr ARGS` in `folder`, which also takes its output (`.bg-std*-<id>` files);
    /// `stdout` replaces the file its stdout goes to.
    init(in folder: URL, _ arguments: [String], stdout: FileHandle? = nil) throws {
        let id = UUID().uuidString
        stdoutPath = folder.appendingPathComponent(".bg-stdout-" + id).path
        stderrPath = folder.appendingPathComponent(".bg-stderr-" + id).path
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = Process()
        process.executableURL = try locateSyncrBinary()
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(["NO_PROXY": "*", "no_proxy": "*"]) { _, b in b }
        process.standardInput = FileHandle.nullDevice
        // Files, not pipes: a chatty child never blocks, and the text is readable at any time.
        process.standardOutput = try stdout ?? FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        // `launch` clears the signal mask the test thread carries, so the child takes signals.
        try launch(process)
        child = ChildProcess(process)
    }

    deinit {
        child.terminate(grace: .seconds(2))
    }

    var pid: Int32 { child.pid }

    /// What it printed to stderr so far.
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

    /// Waits until stderr contains `text` (or the process ended, or the timeout passed).
    func waitForStderr(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        _ = await poll(timeout: timeout) { stderr.contains(text) || !child.isRunning }
        return stderr.contains(text)
    }

    func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// Waits for the end; returns the exit status as a shell reports it (128 + N for signal N),
    /// or nil when it did not end in time (it is then killed).
    func finish(timeout: Duration = .seconds(60)) async -> Int32? {
        let ended = await poll(timeout: timeout) { !child.isRunning }
        guard ended else {
            child.terminate(grace: .seconds(1))
            return nil
        }
        let process = child.process
        process.waitUntilExit()
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? 128 + status : status
    }
}

extension Project {
    /// The bytes the cache records as durable for the only partial entry (from one offset or
    /// in pieces), 0 when there is none.
    func keptBytes() -> Int {
        guard let state = cacheStates().first(where: { ($0["complete"] as? Bool) != true }) else { return 0 }
        let good = state["good"] as? Int ?? 0
        let ranges = (state["ranges"] as? [[Int]] ?? []).reduce(0) { $0 + (($1.count == 2) ? $1[1] - $1[0] : 0) }
        return max(good, ranges)
    }
}
