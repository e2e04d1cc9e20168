#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrHTTP
import SyncrLock
import Testing
@testable import SyncrCore

/// One run at a time per cache folder. Within one process each `attempt` opens the file anew,
/// and `flock` locks belong to the open file, so a second attempt here conflicts exactly as
/// a second process would.
@Suite(.timeLimit(.minutes(10))) struct CacheLockTests {
    @Test func lockCreatesTheFolderAndRecordsOurPID() throws {
        let folder = try TemporaryFolder()
        let cache = folder.path + "/a/cache"
        let lock = try #require(try CacheLock.attempt(directory: cache))
        #expect(lock.path == cache + "/syncr.lock")
        #expect(CacheLock.holder(directory: cache) == getpid())
        lock.release()
    }

    /// A lock this process holds (another task's, or one not released) is said to be this
    /// process's, not another run's naming our own PID. Known by the lock file this process
    /// holds, not by the PID in it: another container's syncr, also PID 1, is another run. A
    /// negative wait is no wait (it said "after waiting -5s").
    @Test func aLockThisProcessHoldsIsSaidToBeItsOwn() async throws {
        let folder = try TemporaryFolder()
        let first = try #require(try CacheLock.attempt(directory: folder.path))
        defer { first.release() }
        await #expect {
            _ = try await CacheLock.acquire(directory: folder.path, timeout: .seconds(-5))
        } throws: { error in
            guard case .heldHere(let directory, let waited) = error as? CacheLockError else { return false }
            return directory == folder.path && waited == .zero
        }
        #expect(CacheLockError.heldHere(directory: "/c", waited: .zero).description
                == "this process already holds the cache /c (a CacheLock not released yet)")
        #expect(CacheLockError.heldHere(directory: "/c", waited: .seconds(90)).description
                == "this process still held the cache /c after waiting 1m30s (a CacheLock not released yet)")
        #expect(CacheLockError.busy(directory: "/c", pid: getpid(), waited: .zero).description
                == "another syncr run (PID \(getpid())) is using the cache /c", "a PID in the file is another process's")
    }

    @Test func secondAttemptFindsTheFolderBusy() throws {
        let folder = try TemporaryFolder()
        let first = try #require(try CacheLock.attempt(directory: folder.path))
        #expect(try CacheLock.attempt(directory: folder.path) == nil)
        first.release()
        let again = try #require(try CacheLock.attempt(directory: folder.path), "free again after release")
        again.release()
    }

    /// A process spawned while the lock is held keeps a copy of its descriptor until it execs
    /// (the suite spawns servers and syncr runs all the time, in parallel with this test). The
    /// copy is made here with `dup`, which shares the open file just as a child's copy does:
    /// `release` must free the cache even so, not only when the last copy closes.
    @Test func releaseFreesTheFolderWhileACopyOfTheDescriptorIsOpen() throws {
        let folder = try TemporaryFolder()
        let first = try #require(try CacheLock.attempt(directory: folder.path))
        let copy = try #require(Self.duplicateDescriptor(of: first.path), "the lock's descriptor in /proc/self/fd")
        defer { close(copy) }
        first.release()
        let again = try #require(try CacheLock.attempt(directory: folder.path), "free once released")
        again.release()
    }

    /// A new descriptor for the open file behind this process's descriptor of `path`.
    static func duplicateDescriptor(of path: String) -> Int32? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in names {
            guard let fd = Int32(name),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                  target == path else { continue }
            let copy = dup(fd)
            if copy >= 0 { return copy }
        }
        return nil
    }

    @Test func busyWithoutTimeoutFailsAtOnceNamingTheHolder() async throws {
        let folder = try TemporaryFolder()
        let held = try #require(try CacheLock.attempt(directory: folder.path))
        defer { held.release() }
        let waited = Locked(false)
        await #expect {
            _ = try await CacheLock.acquire(directory: folder.path) { _ in waited.withLock { $0 = true } }
        } throws: { error in
            // Held by this process: said so (another process's gets `.busy`, its PID read from the file).
            guard case .heldHere(let directory, let after) = error as? CacheLockError else { return false }
            return directory == folder.path && after == .zero
        }
        #expect(!waited.withLock { $0 }, "a zero timeout does not wait")
        let message = CacheLockError.busy(directory: "/c", pid: 1234, waited: .zero).description
        #expect(message == "another syncr run (PID 1234) is using the cache /c")
    }

    @Test func busyAfterTheTimeoutSaysHowLongItWaited() async throws {
        let folder = try TemporaryFolder()
        let held = try #require(try CacheLock.attempt(directory: folder.path))
        defer { held.release() }
        let announced = Locked<Int32?>(nil)
        await #expect {
            _ = try await CacheLock.acquire(directory: folder.path, timeout: .milliseconds(150)) { pid in
                announced.withLock { $0 = pid }
            }
        } throws: { error in
            guard case .heldHere(_, let after) = error as? CacheLockError else { return false }
            return after == .milliseconds(150)
        }
        #expect(announced.withLock { $0 } == getpid(), "the wait was announced with the holder's PID")
        let message = CacheLockError.busy(directory: "/c", pid: 1234, waited: .seconds(90)).description
        #expect(message == "another syncr run (PID 1234) still held the cache /c after waiting 1m30s")
    }

    @Test func waiterGetsTheLockOnceTheHolderReleasesIt() async throws {
        let folder = try TemporaryFolder()
        let held = try #require(try CacheLock.attempt(directory: folder.path))
        let waiting = OneShot<Bool>()
        let waiter = Task {
            try await CacheLock.acquire(directory: folder.path, timeout: .seconds(60)) { _ in waiting.fulfil(true) }
        }
        #expect(await waiting.wait() == true)
        held.release()
        let lock = try await waiter.value
        #expect(CacheLock.holder(directory: folder.path) == getpid())
        lock.release()
    }

    @Test func cancellingAWaiterStopsIt() async throws {
        let folder = try TemporaryFolder()
        let held = try #require(try CacheLock.attempt(directory: folder.path))
        defer { held.release() }
        let waiting = OneShot<Bool>()
        let waiter = Task {
            try await CacheLock.acquire(directory: folder.path, timeout: .seconds(600)) { _ in waiting.fulfil(true) }
        }
        _ = await waiting.wait()
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
    }

    /// A lock file left by a run that crashed names a dead PID, but no one holds its `flock`.
    @Test func staleLockFileDoesNotBlock() throws {
        let folder = try TemporaryFolder()
        try "999999\n".write(toFile: folder.path + "/syncr.lock", atomically: true, encoding: .utf8)
        let lock = try #require(try CacheLock.attempt(directory: folder.path))
        #expect(CacheLock.holder(directory: folder.path) == getpid())
        lock.release()
        #expect(CacheLock.holder(directory: folder.path) == nil, "a released lock names no one")
    }

    @Test func droppingTheLockReleasesIt() throws {
        let folder = try TemporaryFolder()
        do {
            let lock = try CacheLock.attempt(directory: folder.path)
            #expect(lock != nil)
        }
        let again = try #require(try CacheLock.attempt(directory: folder.path))
        again.release()
    }

    @Test func unwritableFolderIsAClearError() throws {
        let folder = try TemporaryFolder()
        try "x".write(toFile: folder.path + "/file", atomically: true, encoding: .utf8)
        #expect {
            _ = try CacheLock.attempt(directory: folder.path + "/file/cache")
        } throws: { error in
            guard case .cannotLock(let path, _, _) = error as? CacheLockError else { return false }
            return path.hasSuffix("/file/cache")
        }
    }

    /// A file where the cache folder goes (`cache: afile`): said, with what to do.
    @Test func aFileWhereTheCacheGoesIsSaid() {
        let text = CacheLockError.cannotLock(path: "/p/afile", operation: "create the cache folder", errno: ENOTDIR).description
        #expect(text.hasSuffix("(a file stands where the cache folder, or a folder above it, goes: name a folder with cache: in the manifest or --cache, or move the file away)"),
                "\(text)")
    }
}
