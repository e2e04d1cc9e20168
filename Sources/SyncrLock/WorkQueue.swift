import Dispatch
import Foundation

/// Up to a fixed number of threads, started as work arrives, that run submitted blocking work
/// in order of submission. The threads live as long as the process, waiting when idle.
///
/// For work that blocks a thread (flushes, disk writes): never Swift's cooperative pool, and
/// never the thread that drives the network.
public final class WorkQueue: Sendable {
    private struct Jobs {
        var waiting: [@Sendable () -> Void] = []
        var head = 0
        var started = 0
        var idle = 0
    }
    private let jobs = Locked(Jobs())
    /// Counts jobs not yet taken: a thread waits on it for the next one.
    private let available = DispatchSemaphore(value: 0)
    private let threads: Int
    private let name: String

    public init(threads: Int, name: String) {
        self.threads = threads
        self.name = name
    }

    public func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = jobs.withLock { j -> Bool in
            j.waiting.append(job)
            // A new thread only when more jobs wait than threads do: a handful of flushes never
            // starts all of them.
            guard j.waiting.count - j.head > j.idle, j.started < threads else { return false }
            j.started += 1
            return true
        }
        if startThread {
            Thread.start(named: name) { [self] in work() }
        }
        available.signal()
    }

    private func work() {
        while true {
            jobs.withLock { $0.idle += 1 }
            available.wait()
            let job = jobs.withLock { j -> @Sendable () -> Void in
                j.idle -= 1
                let job = j.waiting[j.head]
                j.head += 1
                if j.head == j.waiting.count {
                    j.waiting.removeAll(keepingCapacity: true)
                    j.head = 0
                }
                return job
            }
            job()
        }
    }
}
