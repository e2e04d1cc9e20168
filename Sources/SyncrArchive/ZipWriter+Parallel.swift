#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with one condition variable.
///
/// `@unchecked Sendable`: the pthread objects live at fixed heap addresses (never moved, as a
/// Swift stored property could be) and are only touched through the pthread calls, which are
/// safe from any thread.
final class ZipMonitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for `broadcast`; call with the lock held.
    func wait() { pthread_cond_wait(condition, mutex) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// Compresses the blocks of all files on `threads` worker threads and hands the results to the
/// one thread that writes the archive, in job order.
///
/// Memory is bounded: a worker takes job `i` only once the writer has consumed job
/// `i - window`, so at most `window` results (about 1 MiB each) wait at any time, whatever the
/// sizes or the number of files.
///
/// `@unchecked Sendable`: `entries`, `total`, `window` and `level` never change; every other
/// stored property is read and written only with `monitor` locked.
final class ZipPipeline: @unchecked Sendable {
    private let entries: [ZipSourceEntry]
    private let window: Int
    private let level: Int32
    private let monitor = ZipMonitor()

    /// Makes the jobs, in order, as workers take them.
    private var cursor: ZipJobCursor
    private let total: Int
    private var consumed = 0
    private var results: [Int: Result<ZipBlockResult, ArchiveError>] = [:]
    /// The method each trial file's block 0 chose, by entry index (nil while being decided).
    private var decisions: [Int: ZipWriter.ZipMethod] = [:]
    private var stopped = false
    private var threads: [pthread_t] = []
    /// Used by `take` when there are no workers (threads: 1): the writer compresses inline.
    private var inline: ZipBlockCompressor?

    init(entries: [ZipSourceEntry], threads: Int, level: Int32) {
        self.entries = entries
        self.cursor = ZipJobCursor(entries: entries, storeAll: level == 0)
        self.total = cursor.total
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
        monitor.lock()
        stopped = true
        monitor.broadcast()
        monitor.unlock()
        for thread in threads { pthread_join(thread, nil) }
        threads = []
    }

    /// The result of job `index`; jobs must be taken in order, each once.
    func take(_ index: Int) throws(ArchiveError) -> ZipBlockResult {
        if let inline {
            guard cursor.taken == index, let job = cursor.next() else {
                throw .io(path: entries.first?.path ?? "", errno: 0, detail: "internal error: block \(index) taken out of order")
            }
            return try inline.run(job, path: entries[job.entry].path) { job, trial in
                decide(job, trial)
            }
        }
        monitor.lock()
        while results[index] == nil { monitor.wait() }
        let result = results.removeValue(forKey: index)!
        consumed = index + 1
        monitor.broadcast()
        monitor.unlock()
        return try result.get()
    }

    private func work() {
        let compressor: ZipBlockCompressor
        do {
            compressor = try ZipBlockCompressor(level: level)
        } catch {
            // Take the next job only to report the failure in its place.
            monitor.lock()
            if !stopped, cursor.next() != nil {
                results[cursor.taken - 1] = .failure(error)
                monitor.broadcast()
            }
            monitor.unlock()
            return
        }
        while true {
            monitor.lock()
            while !stopped && cursor.taken < total && cursor.taken >= consumed + window { monitor.wait() }
            guard !stopped, let job = cursor.next() else {
                monitor.unlock()
                return
            }
            let index = cursor.taken - 1
            monitor.unlock()

            let result: Result<ZipBlockResult, ArchiveError>
            do throws(ArchiveError) {
                result = .success(try compressor.run(job, path: entries[job.entry].path) { job, trial in
                    decide(job, trial)
                })
            } catch {
                result = .failure(error)
            }
            monitor.lock()
            results[index] = result
            monitor.broadcast()
            monitor.unlock()
        }
    }

    /// For block 0 of a file: runs the trial and publishes the method; for a later block:
    /// waits for block 0's answer. Block 0 is always taken before the file's later blocks, and
    /// publishes before anything that could block, so the wait always ends.
    private func decide(_ job: ZipBlockJob, _ trial: () -> ZipWriter.ZipMethod) -> ZipWriter.ZipMethod {
        if job.block == 0 {
            let method = trial()
            monitor.lock()
            decisions[job.entry] = method
            monitor.broadcast()
            monitor.unlock()
            return method
        }
        monitor.lock()
        defer { monitor.unlock() }
        while true {
            // Kept until the end: a slower worker may still hold an earlier block of the file.
            if let method = decisions[job.entry] { return method }
            monitor.wait()
        }
    }
}
