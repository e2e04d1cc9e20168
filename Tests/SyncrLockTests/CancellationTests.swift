#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SyncrLock
import Testing

/// `Cancellation.isRequested`: a task's own cancellation, and on a thread doing blocking work
/// for a task, the request that task's cancellation sets.
@Suite(.timeLimit(.minutes(5)))
struct CancellationTests {
    /// Runs `body` on one of Dispatch's threads, where there is no current task.
    func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }

    @Test func aThreadServingNoRequestIsNotAsked() async {
        #expect(await onAThreadOfItsOwn { Cancellation.isRequested } == false)
    }

    /// The request is seen once set, only while it is served, and the earlier one is back after.
    @Test func aThreadSeesTheRequestItServesAndOnlyWhileItServesIt() async {
        let seen = await onAThreadOfItsOwn { () -> [Bool] in
            let outer = StopRequest(), inner = StopRequest()
            var seen: [Bool] = []
            Cancellation.serving(outer) {
                seen.append(Cancellation.isRequested)
                outer.set()
                seen.append(Cancellation.isRequested)
                Cancellation.serving(inner) { seen.append(Cancellation.isRequested) }
                seen.append(Cancellation.isRequested)
            }
            seen.append(Cancellation.isRequested)
            return seen
        }
        #expect(seen == [false, true, false, true, false])
    }

    /// A request set on another thread is seen by the one serving it.
    @Test func aRequestSetElsewhereIsSeen() async {
        let request = StopRequest()
        let started = StopRequest()
        let task = Task {
            await onAThreadOfItsOwn { () -> Bool in
                Cancellation.serving(request) { () -> Bool in
                    started.set()
                    // Bounded, so that a broken request fails the test instead of hanging it.
                    var waited = 0
                    while !Cancellation.isRequested, waited < 60_000 {
                        usleep(1_000)
                        waited += 1
                    }
                    return Cancellation.isRequested
                }
            }
        }
        while !started.isSet { try? await Task.sleep(for: .milliseconds(1)) }
        request.set()
        #expect(await task.value)
    }

    @Test func aCancelledTaskIsAsked() async {
        let task = Task { () -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            return Cancellation.isRequested
        }
        #expect(await task.value)
    }
}
