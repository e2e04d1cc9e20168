#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock
import SyncrTestSupport
import Testing
@testable import SyncrCore

/// `BlockingIO.run`: the calling task's cancellation (a signal) reaches the body on its
/// Dispatch thread, and a body stopped by it throws `Interrupted`, not its own error.
@Suite(.timeLimit(.minutes(5))) struct BlockingIOTests {
    struct Stopped: Error {}

    /// A body that runs until it is asked to stop (a minute at most, so that a request that
    /// never arrives fails the test instead of hanging it), cancelled once it runs, and stops
    /// as a hash does (`ECANCELED`).
    @Test func aCancelledCallerStopsTheBodyAndIsInterrupted() async throws {
        let running = StopRequest()
        let task = Task {
            try await BlockingIO.run { () throws -> Int in
                running.set()
                for _ in 0..<60_000 {
                    if Cancellation.isRequested { throw FileError(path: "/x", operation: "read", errno: ECANCELED) }
                    usleep(1_000)
                }
                return 0
            }
        }
        while !running.isSet { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        await #expect(throws: Interrupted.self) { try await task.value }
    }

    /// A body that does not look (an unpack) and fails while its task is cancelled fails with
    /// its own error (a full disk stays a full disk), not as interrupted.
    @Test func aBodyThatDoesNotLookKeepsItsOwnFailure() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingIO.run { () throws -> Int in
                throw FileError(path: "/x", operation: "write", errno: ENOSPC)
            }
        }
        await #expect(throws: FileError(path: "/x", operation: "write", errno: ENOSPC)) { try await task.value }
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

    /// The hash of a 64 GiB file (sparse: no disk space), cancelled once it reads the file,
    /// stops within a block, where the whole hash would take about a minute here.
    @Test func aHashStopsWhenItsTaskIsCancelled() async throws {
        let tmp = try TemporaryFolder()
        let path = tmp.path + "/large.bin"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0 && ftruncate(fd, 64 << 30) == 0)
        close(fd)
        let task = Task { try await BlockingIO.run { try FS.digests(of: path, algorithms: ["sha256"]) } }
        let deadline = ContinuousClock.now + .seconds(60)
        while !holdsOpen({ $0 == path }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        await #expect(throws: Interrupted.self) { try await task.value }
    }
}
