#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock
import SyncrTestSupport

/// What a finished child process left behind.
struct ProcessResult: Sendable {
    /// The exit status, or 128 + signal number when a signal ended it (as shells report it).
    var exitCode: Int32
    /// Everything the process wrote to stdout.
    var stdoutData: Data
    /// Everything the process wrote to stderr.
    var stderrData: Data
    /// Whether `runProcess` had to end the process because it outlived its timeout.
    var timedOut: Bool

    /// stdout decoded as UTF-8 (invalid bytes repaired).
    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    /// stderr decoded as UTF-8 (invalid bytes repaired).
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }
}

/// Errors from starting or supervising child processes.
enum ProcessError: Error, CustomStringConvertible {
    case notFound(executable: String)
    case launchFailed(executable: String, reason: String)

    var description: String {
        switch self {
        case .notFound(let executable):
            return "\(executable): not found on PATH or not executable"
        case .launchFailed(let executable, let reason):
            return "\(executable): could not start: \(reason)"
        }
    }
}

/// Runs a program to completion and collects its output.
///
/// Both pipes are drained on their own threads while the process runs, so a child that
/// writes a lot to one of them never blocks on a full pipe (the classic deadlock).
/// - Parameters:
///   - executable: an absolute path, or a name looked up on `PATH`.
///   - environment: variables set on top of this process's environment (nil: inherit as is).
///   - cwd: the working directory (nil: this process's).
///   - stdin: bytes fed to standard input (nil: /dev/null).
///   - timeout: after this the process gets SIGTERM, and SIGKILL 2 s later; `timedOut` is set.
func runProcess(
    executable: String,
    arguments: [String] = [],
    environment: [String: String]? = nil,
    cwd: URL? = nil,
    stdin: Data? = nil,
    timeout: Duration = .seconds(120)
) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try resolveExecutable(executable))
    process.arguments = arguments
    if let environment {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    if let cwd { process.currentDirectoryURL = cwd }
    let outPipe = makePipe(), errPipe = makePipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    let inPipe: Pipe? = stdin == nil ? nil : makePipe()
    process.standardInput = inPipe ?? FileHandle.nullDevice

    let output = LockedBox(Data()), errors = LockedBox(Data()), timedOut = LockedBox(false)
    let group = DispatchGroup()
    group.enter()
    process.terminationHandler = { _ in group.leave() }
    do {
        try launch(process)
    } catch {
        throw ProcessError.launchFailed(executable: executable, reason: "\(error)")
    }
    for (pipe, box) in [(outPipe, output), (errPipe, errors)] {
        group.enter()
        // A thread of its own: the read or write lasts as long as the child takes, and on Linux
        // the workers of DispatchQueue.global also run Swift's tasks.
        Thread.start(named: "test-pipe") {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            box.withLock { $0 = data }
            group.leave()
        }
    }
    if let inPipe, let stdin {
        Thread.start(named: "test-pipe") {
            // A child that exits without reading makes this write fail; that is fine.
            try? inPipe.fileHandleForWriting.write(contentsOf: stdin)
            try? inPipe.fileHandleForWriting.close()
        }
    }
    let supervisor = ChildProcess(process)
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        timedOut.withLock { $0 = true }
        supervisor.terminate(grace: .seconds(2))
    }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        group.notify(queue: .global()) { continuation.resume() }
    }
    watchdog.cancel()
    // Both pipes are drained to EOF: close their read ends now rather than with the Process
    // object, which Foundation keeps alive (see `ChildProcess.reap`).
    try? outPipe.fileHandleForReading.close()
    try? errPipe.fileHandleForReading.close()
    ChildProcess.reap(process)
    let status = process.terminationStatus
    let exitCode = process.terminationReason == .uncaughtSignal ? 128 + status : status
    return ProcessResult(
        exitCode: exitCode,
        stdoutData: output.withLock { $0 },
        stderrData: errors.withLock { $0 },
        timedOut: timedOut.withLock { $0 })
}

/// Finds `name` on `PATH` unless it already contains a slash.
func resolveExecutable(_ name: String) throws -> String {
    if name.contains("/") {
        guard FileManager.default.isExecutableFile(atPath: name) else {
            throw ProcessError.notFound(executable: name)
        }
        return name
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw ProcessError.notFound(executable: name)
}

/// A long-running child (a server) that must not outlive its test.
///
/// `terminate` sends SIGTERM, waits up to the grace period, then SIGKILLs, and reaps it.
/// It is idempotent, so both an explicit `stop()` and `deinit` may call it. A child started
/// with `launchServer` is a process group (the watchdog and the server): signals go to the
/// whole group, and the group ends by itself when this process ends, however it ends.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `Process` is not Sendable; after `run()` this type only reads its
    // `processIdentifier` and `isRunning`, which Foundation guards internally, and
    // `stopped` and `lifeline` are behind locks.
    let process: Process
    private let stopped = LockedBox(false)
    /// Whether signals go to the child's process group (its own, as Foundation spawns it).
    private let group: Bool
    /// The write end of the watchdog's lifeline (-1 when there is none, or once closed).
    private let lifeline: LockedBox<Int32>

    init(_ process: Process, group: Bool = false, lifeline: Int32 = -1) {
        self.process = process
        self.group = group
        self.lifeline = LockedBox(lifeline)
    }

    deinit {
        closeLifeline()
    }

    /// The child's process id (for a server: its watchdog's, which leads the process group).
    var pid: Int32 { process.processIdentifier }

    /// Whether the child is still running.
    var isRunning: Bool { process.isRunning }

    /// Ends the child: SIGTERM, then SIGKILL after `grace`. Blocks until it is gone.
    func terminate(grace: Duration = .seconds(5)) {
        let first = stopped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        defer { closeLifeline() }
        guard process.isRunning else { return Self.reap(process) }
        signal(SIGTERM)
        if !wait(timeout: grace) {
            signal(SIGKILL)
            // Bounded: should Foundation ever miss the end of a child again, a test must fail on
            // its own time limit rather than hold a pool thread for an hour.
            _ = wait(timeout: .seconds(60))
        }
    }

    /// Waits until the child has ended and Foundation has seen it, for at most `timeout`.
    ///
    /// Polls with a sleep: `Process.waitUntilExit` spins at full speed on any thread but the
    /// one that started the process (its run loop has no source there), and a task resumes on
    /// any thread.
    /// - Returns: whether it ended.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
        Self.reap(process)
        return true
    }

    /// Waits until the child has ended and Foundation has seen it, for at most `timeout`, on a
    /// thread of its own: a test on Swift's pool that called `Process.waitUntilExit` (which
    /// spins on any thread but the launching one) or `wait` held one of the pool's two threads
    /// (on CI) for as long, and with two such waits every test of the process stood still.
    /// - Returns: whether it ended.
    @discardableResult
    func ended(timeout: Duration = .seconds(60)) async -> Bool {
        let process = process
        let done = await pollOnItsOwnThread(timeout: timeout) { !process.isRunning }
        if done { Self.reap(process) }
        return done
    }

    /// Lets Foundation free a process that has ended, with the pipes and files it holds.
    ///
    /// A `Process` keeps itself alive through its run loop source until `waitUntilExit` clears
    /// it; one that ended through a termination handler alone is never freed, and neither are
    /// the read ends of its pipes. Leaked by every run, they took the test process past 1,024
    /// descriptors, where Foundation's unchecked `socketpair` for the next child fails and
    /// that child's end can no longer be seen: the test waiting for it spun in
    /// `waitUntilExit` for ever. Called only once the process has ended, so this returns at once.
    static func reap(_ process: Process) {
        guard !process.isRunning else { return }
        process.waitUntilExit()
    }

    private func signal(_ number: Int32) {
        _ = kill(group ? -pid : pid, number)
    }

    private func closeLifeline() {
        lifeline.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }
}

/// Starts a server through `Tests/Servers/watchdog.py`, so that it ends with this process.
///
/// The watchdog holds the read end of a pipe whose only write end stays here (close-on-exec,
/// so no other child inherits it). When this process ends, however it ends (SIGKILL
/// included), the pipe reaches EOF and the watchdog kills its process group: itself, the
/// server and anything the server forked. (`PR_SET_PDEATHSIG` would fire when the spawning
/// thread exits, and Dispatch ends idle threads.) Foundation spawns every child in a process
/// group of its own, so the group is exactly the watchdog and the server.
/// - Parameters:
///   - configure: sets the server's executable, arguments and standard streams on a
///     `Process`; the watchdog runs it as given, with the same streams.
func launchServer(_ configure: (Process) throws -> Void) throws -> ChildProcess {
    let server = Process()
    try configure(server)
    guard let executable = server.executableURL?.path else {
        throw ProcessError.launchFailed(executable: "?", reason: "no executable set")
    }
    var fds: [Int32] = [0, 0]
    // Close-on-exec at once (Glibc's module has no pipe2), and made while no child is being
    // spawned (`makePipe`): Foundation closes other descriptors in the children it spawns, but
    // only those open when it looked.
    let made = withSpawnLock { () -> Bool in
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }
    guard made else {
        throw ProcessError.launchFailed(executable: executable, reason: "pipe: \(String(cString: strerror(errno)))")
    }
    let watchdog = Process()
    watchdog.executableURL = URL(fileURLWithPath: try resolveExecutable("python3"))
    watchdog.arguments = ["-u", repositoryRoot().appendingPathComponent("Tests/Servers/watchdog.py").path, "--",
                          executable] + (server.arguments ?? [])
    watchdog.environment = server.environment
    watchdog.currentDirectoryURL = server.currentDirectoryURL
    // The lifeline is the watchdog's stdin; the server gets /dev/null.
    let readEnd = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
    watchdog.standardInput = readEnd
    watchdog.standardOutput = server.standardOutput
    watchdog.standardError = server.standardError
    do {
        try launch(watchdog)
    } catch {
        close(fds[1])
        throw ProcessError.launchFailed(executable: executable, reason: "\(error)")
    }
    try? readEnd.close()
    // The child has its copies of a file given as stdout or stderr: close ours now (a Pipe's
    // write end Foundation closes itself).
    for stream in [watchdog.standardOutput, watchdog.standardError] {
        if let handle = stream as? FileHandle, handle !== FileHandle.nullDevice { try? handle.close() }
    }
    return ChildProcess(watchdog, group: true, lifeline: fds[1])
}

/// The port a test server prints as its first line, `PORT <n>`, once it listens.
///
/// Reads on a plain thread (a blocking read); a watchdog kills the child if the line does not
/// come within `timeout`, which ends the read with EOF. Returns nil, with what was read, when the
/// line is not there.
func portLine(of child: ChildProcess, stdout: Pipe, timeout: Duration = .seconds(60)) async -> (port: UInt16?, line: String) {
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        child.terminate(grace: .seconds(1))
    }
    let line = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
        // A thread of its own, as in runProcess.
        Thread.start(named: "test-pipe") {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
        }
    }
    watchdog.cancel()
    guard line.hasPrefix("PORT ") else { return (nil, line) }
    return (UInt16(line.dropFirst(5).prefix { $0 != "\n" }), line)
}

/// Starts one of the Python servers in `Tests/Servers` through the watchdog (so it ends with the
/// test process) and waits for the `PORT n` line it prints once it listens. Its stderr goes to
/// `stderr.log` in `directory`.
/// - Returns: the server and its port; on failure, the server is stopped and `failure` holds
///   what it printed, for the caller's error.
func startPythonServer(_ script: URL, arguments: [String],
                       directory: TemporaryDirectory) async throws -> (child: ChildProcess, port: UInt16?, failure: String) {
    let stderrFile = directory.appending("stderr.log")
    _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
    let stdout = makePipe()
    let child = try launchServer { process in
        process.executableURL = URL(fileURLWithPath: try resolveExecutable("python3"))
        process.arguments = ["-u", script.path] + arguments
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: stderrFile)
    }
    // Only the first line is read; the servers write nothing more to stdout.
    defer { try? stdout.fileHandleForReading.close() }
    let (port, line) = await portLine(of: child, stdout: stdout)
    guard port == nil else { return (child, port, "") }
    child.terminate(grace: .seconds(1))
    let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    return (child, nil, line + log)
}

/// A value behind a lock, for state shared with Dispatch callbacks.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// The package's root folder, found from this source file's path.
func repositoryRoot(filePath: String = #filePath) -> URL {
    // <root>/Tests/SyncrIntegrationTests/Support/Processes.swift
    URL(fileURLWithPath: filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
}

/// The built `syncr` executable.
///
/// `SYNCR_BIN` overrides; otherwise the `syncr` beside the running test bundle (on Linux
/// `swift test` runs `.build/<triple>/debug/syncrPackageTests.xctest`, and `syncr` is
/// built into the same folder), then `.build/debug/syncr` under the repository root.
func locateSyncrBinary() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let override = environment["SYNCR_BIN"], !override.isEmpty {
        guard FileManager.default.isExecutableFile(atPath: override) else {
            throw ProcessError.notFound(executable: "SYNCR_BIN=\(override)")
        }
        return URL(fileURLWithPath: override)
    }
    var candidates: [URL] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On Darwin the bundle's executable sits in X.xctest/Contents/MacOS.
        while directory.path.contains(".xctest") {
            directory.deleteLastPathComponent()
        }
        candidates.append(directory.appendingPathComponent("syncr"))
    }
    if let bundle = Bundle.main.executableURL {
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("syncr"))
    }
    for configuration in ["debug", "release"] {
        candidates.append(repositoryRoot().appendingPathComponent(".build/\(configuration)/syncr"))
    }
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
    }
    throw ProcessError.notFound(
        executable: "syncr (looked in \(candidates.map(\.path).joined(separator: ", ")); "
            + "run `swift build` or set SYNCR_BIN)")
}
