#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Dispatch
import Foundation
import SyncrArchive
import SyncrLock

/// Runs blocking system calls (fsync, hashing, large copies) on Dispatch's global pool, so that
/// they overlap instead of holding one of the few threads Swift concurrency runs tasks on.
///
/// The calling task's cancellation (SIGINT, SIGTERM) reaches the body through
/// `Cancellation.isRequested`, which the long loops check once per block (a hash, a zip): a
/// hash of a large file stops within a block instead of running to its end while the run
/// waits. A body that stopped for it throws `Interrupted`; one that does not look (a flush, an
/// unpack, the copy into place) finishes, and its own failure (a full disk) stays what it is.
enum BlockingIO {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let stop = StopRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global(qos: .userInitiated).async {
                    let result = Result { try Cancellation.serving(stop) { try body() } }
                    if case .failure(let error) = result, stop.isSet, isStop(error) {
                        continuation.resume(throwing: Interrupted())
                    } else {
                        continuation.resume(with: result)
                    }
                }
            }
        } onCancel: {
            stop.set()
        }
    }

    /// Whether `error` is what a body gives when it stops because `Cancellation.isRequested`:
    /// a hash's `ECANCELED` (`FS.digests`), a zip's or a folder walk's `.interrupted`. Any
    /// other error is the body's own, also when it comes after the signal.
    static func isStop(_ error: any Error) -> Bool {
        if let error = error as? FileError { return error.errno == ECANCELED }
        if case .interrupted? = error as? ArchiveError { return true }
        if case .interrupted? = error as? UploadTree.Problem { return true }
        return false
    }
}

/// Flushes finished files to disk (`fdatasync`) on threads of its own, many at once.
///
/// Each file is flushed by itself, never the whole file system (`syncfs` would also flush every
/// other program's dirty pages). Flushes run in parallel so that the file system can commit
/// them together (ext4 and XFS join concurrent flushes into one journal commit), and on
/// dedicated threads so that a slow disk holds neither Swift's cooperative pool nor the thread
/// that drives the network.
final class FlushPool: Sendable {
    /// Flushes in flight at most: enough for a journal commit to gather many files.
    static let width = 16

    private let queue = WorkQueue(threads: FlushPool.width, name: "syncr-flush")

    /// Returns once the file's data is on disk.
    func flush(fd: Int32, path: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.submit {
                if fdatasync(fd) == 0 {
                    continuation.resume()
                } else {
                    continuation.resume(throwing: FileError(path: path, operation: "flush", errno: errno))
                }
            }
        }
    }
}

/// Folders whose entries changed in this run; each is flushed once at the end, so that a
/// thousand files moved into one folder cost one `fsync` of it, not a thousand. It also knows
/// the destination folders this run made or found, so that a thousand files moved into one
/// folder cost one check that it exists.
final class ChangedFolders: Sendable {
    private struct Folders {
        var changed: Set<String> = []
        var existing: Set<String> = []
    }
    private let folders = Locked(Folders())
    /// Off with `fsync: false`: the renames reach the disk when the kernel writes them back.
    private let flushes: Bool
    /// Flushes one folder (`FS.syncDirectory`); a test plays a disk that fails with it, which
    /// no real one on this machine can be made to do without root tools.
    private let flush: @Sendable (String) -> FileError?

    init(flushes: Bool, flush: @escaping @Sendable (String) -> FileError? = { FS.syncDirectory($0) }) {
        self.flushes = flushes
        self.flush = flush
    }

    func add(_ folder: String) {
        _ = folders.withLock { $0.changed.insert(folder) }
    }

    /// Makes `folder` (and those above it) unless this run already made or found it. A folder
    /// removed by someone else meanwhile shows up as the rename into it failing with ENOENT.
    func ensure(_ folder: String) throws(FileError) {
        if folders.withLock({ $0.existing.contains(folder) }) { return }
        try FS.makeDirectories(folder)
        _ = folders.withLock { $0.existing.insert(folder) }
    }

    /// Forgets that `folder` exists: the next `ensure` checks again.
    func forget(_ folder: String) {
        _ = folders.withLock { $0.existing.remove(folder) }
    }

    /// Flushes every changed folder once; returns the flushes that failed, in folder order.
    func syncAll() async -> [FileError] {
        let all = folders.withLock { f -> Set<String> in
            defer { f.changed = [] }
            return f.changed
        }
        guard flushes else { return [] }
        var failures: [FileError] = []
        for folder in all.sorted() {
            let flush = self.flush
            if let failure = try? await BlockingIO.run({ flush(folder) }) { failures.append(failure) }
        }
        return failures
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// A counting semaphore for tasks: at most `limit` holders at once, waiters served in order.
actor AsyncSemaphore {
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Releases that handed the permit straight to a waiter: each wakes another task.
    private(set) var handedOver = 0

    init(limit: Int) {
        available = limit
    }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            handedOver += 1
            waiters.removeFirst().resume()
        }
    }
}
