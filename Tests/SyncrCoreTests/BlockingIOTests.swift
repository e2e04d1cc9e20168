#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock
import Testing
@testable import SyncrCore

/// `BlockingIO.run`: the calling task's cancellation (a signal) reaches the body on its
/// Dispatch thread, and a body stopped by it throws `Interrupted`, not its own error.
@Suite(.timeLimit(.minutes(5))) struct BlockingIOTests {
    struct Stopped: Error {}

    /// A body that runs until it is asked to stop (a minute at most, so that a request that
    /// never arrives fails the test instead of hanging it), cancelled once it runs.
    @Test func aCancelledCallerStopsTheBodyAndIsInterrupted() async throws {
        let running = StopRequest()
        let task = Task {
            try await BlockingIO.run { () throws -> Int in
                running.set()
                for _ in 0..<60_000 {
                    if Cancellation.isRequested { throw Stopped() }
                    usleep(1_000)
                }
                return 0
            }
        }
        while !running.isSet { await Task.yield() }
        task.cancel()
        await #expect(throws: Interrupted.self) { try await task.value }
    }

    /// A body that does not look (a flush, an unpack) finishes, and its value comes back.
    @Test func aBodyThatDoesNotLookFinishesAndGivesItsValue() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingIO.run { 42 }
        }
        #expect(try await task.value == 42)
    }

    /// A body that fails on its own, uncancelled, fails with its own error.
    @Test func aFailureOfItsOwnIsNotAnInterruption() async throws {
        await #expect(throws: Stopped.self) { try await BlockingIO.run { () throws -> Int in throw Stopped() } }
    }

    /// The hash of a 64 GiB file (sparse: no disk space) stops within a block once its task is
    /// cancelled, where the whole hash would take about a minute here.
    @Test func aHashStopsWhenItsTaskIsCancelled() async throws {
        let tmp = try TemporaryFolder()
        let path = tmp.path + "/large.bin"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0 && ftruncate(fd, 64 << 30) == 0)
        close(fd)
        let task = Task { try await BlockingIO.run { try FS.digests(of: path, algorithms: ["sha256"]) } }
        task.cancel()
        await #expect(throws: Interrupted.self) { try await task.value }
    }
}
