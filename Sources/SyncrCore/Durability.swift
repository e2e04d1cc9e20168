#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Dispatch

/// Runs blocking system calls (fsync, hashing, large copies) on Dispatch's global pool, so that
/// they overlap instead of holding one of the few threads Swift concurrency runs tasks on.
enum BlockingIO {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}

/// Makes many small finished files durable together: one `syncfs` for every file finished
/// while the previous one ran (group commit), instead of one `fdatasync` after another.
///
/// A caller's bytes are on disk when `flush` returns, because its writes happened before it
/// called, and every flush it can join starts after it joined.
actor GroupFlush {
    private let directory: String
    private var waiting: [CheckedContinuation<Void, any Error>] = []
    private var running = false

    init(directory: String) {
        self.directory = directory
    }

    func flush() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.append(continuation)
            if !running {
                running = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !waiting.isEmpty {
            let batch = waiting
            waiting = []
            let directory = self.directory
            let result = await Result {
                try await BlockingIO.run { () throws -> Void in
                    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                    guard fd >= 0 else { throw FileError(path: directory, operation: "open", errno: errno) }
                    defer { close(fd) }
                    if syncr_syncfs(fd) != 0 { throw FileError(path: directory, operation: "flush", errno: errno) }
                }
            }
            for continuation in batch { continuation.resume(with: result) }
        }
        running = false
    }
}

/// Folders whose entries changed in this run; each is flushed once at the end, so that a
/// thousand files moved into one folder cost one `fsync` of it, not a thousand.
actor ChangedFolders {
    private var folders: Set<String> = []

    func add(_ folder: String) {
        folders.insert(folder)
    }

    func syncAll() async {
        let all = folders
        folders = []
        for folder in all {
            _ = try? await BlockingIO.run { FS.syncDirectory(folder) }
        }
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
            waiters.removeFirst().resume()
        }
    }
}
