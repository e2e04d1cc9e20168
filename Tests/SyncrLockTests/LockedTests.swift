#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock
import Testing

/// The one lock type: mutual exclusion, and waiting for a value on threads of one's own.
@Suite(.timeLimit(.minutes(10)))
struct LockedTests {
    /// Runs `body` on `count` threads of its own (not Swift's pool: they block) and waits for all.
    /// A thread never woken would hang the whole test run (the suite's time limit cannot stop a
    /// blocked thread), so the wait gives up after a minute and the test fails instead: a bound
    /// on a hang, not a measure of speed (the work takes milliseconds).
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for i in 0..<count {
            group.enter()
            Thread {
                body(i)
                group.leave()
            }.start()
        }
        let ended = group.wait(timeout: .now() + 60) == .success
        #expect(ended, "a thread is still blocked: it waits for a value that is ready, or for a lock never released")
    }

    @Test func incrementsFromManyThreadsAreNeverLost() {
        let counter = Locked(0)
        Self.onThreads(4) { _ in
            for _ in 0..<2_000 {
                counter.withLock { value in
                    // Read, give the processor away, write: unguarded, increments would be lost.
                    let read = value
                    sched_yield()
                    value = read + 1
                }
            }
        }
        #expect(counter.withLock { $0 } == 8_000)
    }

    @Test func aWaitingThreadWakesWhenAnotherMakesTheValueReady() {
        let jobs = Locked([Int](), waitable: true)
        let taken = Locked([Int](), waitable: true)
        // Two consumers wait for work; one producer hands out six jobs, each once the one before
        // was taken (so the consumers are asleep on an empty queue), then a stop (-1) for each.
        Self.onThreads(3) { thread in
            if thread == 0 {
                for job in 1...6 {
                    jobs.withLock { $0.append(job) }
                    taken.withLock(when: { $0.count == job }) { _ in }
                }
                jobs.withLock { $0.append(contentsOf: [-1, -1]) }
                return
            }
            while true {
                let job = jobs.withLock(when: { !$0.isEmpty }) { $0.removeFirst() }
                if job < 0 { return }
                taken.withLock { $0.append(job) }
            }
        }
        #expect(taken.withLock { $0 }.sorted() == [1, 2, 3, 4, 5, 6])
        #expect(jobs.withLock { $0 }.isEmpty)
    }
}
