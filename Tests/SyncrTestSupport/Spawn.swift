#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Starts `process` with every signal unblocked in the child, while no other child of this test
/// process is being spawned. Every test target spawns through here: they all run in one process.
///
/// A child inherits the signal mask of the thread that spawns it, and Foundation's `Process`
/// does not reset it. Dispatch and Swift concurrency worker threads block nearly every signal,
/// so a child spawned from a test would ignore SIGTERM and SIGINT (servers would not stop, and
/// syncr could not be tested for interruption). The mask is cleared on this thread only for the
/// duration of the spawn.
///
/// Spawns are made one at a time. Foundation's `Process` on Linux learns that a child ended
/// when a socket it hands that child (without close-on-exec) reaches end of file. It closes
/// every other descriptor in the child, but only those open when it looked: a child spawned by
/// another thread at that moment inherits the socket too, and keeps it open as long as it
/// lives. A server spawned that way kept another test's child "running" for ever (a zombie,
/// `isRunning` true, no termination handler), and two tests blocked in `stop()` held both
/// threads of the cooperative pool, so the whole run stopped (seen in an AddressSanitizer run).
public func launch(_ process: Process) throws {
    try withSpawnLock {
        var empty = sigset_t(), saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }
}

/// A pipe for a child's standard input or output, made while no child is being spawned. A pipe
/// has no close-on-exec (the child needs its end), and Foundation closes, in a child it spawns,
/// only the descriptors open when it looked: a pipe made by another thread in that moment
/// reached the child. A long-lived one (a server's watchdog) then held a short command's output
/// open, and the test reading it waited for an end of file that never came: a whole
/// ThreadSanitizer run hung so. Every pipe handed to a child is made here.
public func makePipe() -> Pipe {
    withSpawnLock { Pipe() }
}

/// Runs `body` while no child is being spawned and no pipe for one is being made: for a
/// descriptor that must be open, and marked close-on-exec, before the next spawn looks.
public func withSpawnLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    spawnLock.lock()
    defer { spawnLock.unlock() }
    return try body()
}

private let spawnLock = NSLock()
