#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// Compresses the blocks of all files on `threads` worker threads and hands the results to the
/// one thread that writes the archive, in job order.
///
/// Memory is bounded: a worker takes job `i` only once the writer has consumed job
/// `i - window`, so at most `window` results (about 1 MiB each) wait at any time, whatever the
/// sizes or the number of files.
///
/// `@unchecked Sendable`: `entries`, `total`, `window` and `level` never change; what the
/// workers and the writer share is in `shared`, behind its lock; `threads` and `inline` are
/// touched only by the writer's thread.
final class ZipPipeline: @unchecked Sendable {
    private let entries: [ZipSourceEntry]
    private let window: Int
    private let level: Int32
    private let total: Int

    /// What the workers and the writer share.
    private struct Shared {
        /// Makes the jobs, in order, as workers take them.
        var cursor: ZipJobCursor
        var consumed = 0
        var results: [Int: Result<ZipBlockResult, ArchiveError>] = [:]
        /// The method each trial file's block 0 chose, by entry index (nil while being decided).
        var decisions: [Int: ZipWriter.ZipMethod] = [:]
        var stopped = false
    }
    /// Waitable: workers wait for room in the window, the writer for its next result.
    private let shared: Locked<Shared>
    private var threads: [pthread_t] = []
    /// Used by `take` when there are no workers (threads: 1): the writer compresses inline.
    private var inline: ZipBlockCompressor?

    init(entries: [ZipSourceEntry], threads: Int, level: Int32) {
        self.entries = entries
        let cursor = ZipJobCursor(entries: entries, storeAll: level == 0)
        self.total = cursor.total
        self.shared = Locked(Shared(cursor: cursor), waitable: true)
        self.window = max(2, 4 * threads)
        self.level = level
    }

    /// Starts the workers; with one thread none are started and `take` does the work.
    func start(threads count: Int) throws(ArchiveError) {
        guard count > 1, total > 0 else {
            inline = try ZipBlockCompressor(level: level)
            return
        }
        for _ in 0..<min(count, total) {
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let code = pthread_create(&thread, nil, { raw in
                let pipeline = Unmanaged<ZipPipeline>.fromOpaque(raw!).takeRetainedValue()
                pipeline.work()
                return nil
            }, context)
            if code != 0 {
                Unmanaged<ZipPipeline>.fromOpaque(context).release()
                if threads.isEmpty { inline = try ZipBlockCompressor(level: level) }
                break
            }
            threads.append(thread)
        }
    }

    /// Stops the workers and waits for them. Call once, whether the archive was finished or not.
    func stop() {
        shared.withLock { $0.stopped = true }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
    }

    /// The result of job `index`; jobs must be taken in order, each once.
    func take(_ index: Int) throws(ArchiveError) -> ZipBlockResult {
        if let inline {
            guard let job = shared.withLock({ $0.cursor.taken == index ? $0.cursor.next() : nil }) else {
                throw .io(path: entries.first?.path ?? "", errno: 0, detail: "internal error: block \(index) taken out of order")
            }
            return try inline.run(job, path: entries[job.entry].path) { job, trial in
                decide(job, trial)
            }
        }
        let result = shared.withLock(when: { $0.results[index] != nil }) { s in
            s.consumed = index + 1
            return s.results.removeValue(forKey: index)!
        }
        return try result.get()
    }

    private func work() {
        let compressor: ZipBlockCompressor
        do {
            compressor = try ZipBlockCompressor(level: level)
        } catch {
            // Take the next job only to report the failure in its place.
            shared.withLock { s in
                if !s.stopped, s.cursor.next() != nil { s.results[s.cursor.taken - 1] = .failure(error) }
            }
            return
        }
        while true {
            let next = shared.withLock(when: { s in
                s.stopped || s.cursor.taken >= total || s.cursor.taken < s.consumed + window
            }) { s -> (ZipBlockJob, Int)? in
                guard !s.stopped, let job = s.cursor.next() else { return nil }
                return (job, s.cursor.taken - 1)
            }
            guard let (job, index) = next else { return }
            let result: Result<ZipBlockResult, ArchiveError>
            do throws(ArchiveError) {
                result = .success(try compressor.run(job, path: entries[job.entry].path) { job, trial in
                    decide(job, trial)
                })
            } catch {
                result = .failure(error)
            }
            shared.withLock { $0.results[index] = result }
        }
    }

    /// For block 0 of a file: runs the trial and publishes the method; for a later block:
    /// waits for block 0's answer. Block 0 is always taken before the file's later blocks, and
    /// publishes before anything that could block, so the wait always ends.
    private func decide(_ job: ZipBlockJob, _ trial: () -> ZipWriter.ZipMethod) -> ZipWriter.ZipMethod {
        if job.block == 0 {
            let method = trial()
            shared.withLock { $0.decisions[job.entry] = method }
            return method
        }
        // Kept until the end: a slower worker may still hold an earlier block of the file.
        return shared.withLock(when: { $0.decisions[job.entry] != nil }) { $0.decisions[job.entry]! }
    }
}
