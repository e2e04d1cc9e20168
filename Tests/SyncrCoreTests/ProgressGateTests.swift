import Testing
@testable import SyncrCore
import SyncrLock

/// A split download's lead connection and its pieces report their own counts of one file,
/// interleaved (229,376, 2,818,048, 425,984, 3,604,480...): an entry's `.progress` events reach
/// the caller as a count that only goes up, until a note that starts the file over.
@Suite(.timeLimit(.minutes(5))) struct ProgressGateTests {
    private final class Recorder: ProgressReporter {
        let events = Locked<[ProgressEvent]>([])
        func report(_ event: ProgressEvent) { events.withLock { $0.append(event) } }
        var counts: [Int64] {
            events.withLock { $0 }.compactMap {
                if case .progress(_, let transferred, _, _, _) = $0 { return transferred }
                return nil
            }
        }
    }

    @Test func theCountOnlyGoesUpUntilTheFileStartsOver() {
        let recorder = Recorder()
        let gate = ProgressGate(recorder)
        for count: Int64 in [229_376, 2_818_048, 425_984, 3_604_480, 819_200] {
            gate.report(.progress(index: 4, transferred: count, total: 20_000_000))
        }
        gate.report(.note(index: 4, note: .multipartResumed(target: "x", parts: 1)))
        gate.report(.progress(index: 4, transferred: 1_000, total: 20_000_000))
        gate.report(.note(index: 4, note: .rangeIgnored))
        gate.report(.progress(index: 4, transferred: 1_000, total: 20_000_000))
        #expect(recorder.counts == [229_376, 2_818_048, 2_818_048, 3_604_480, 3_604_480, 3_604_480, 1_000])
        let passed = recorder.events.withLock { $0 }
        #expect(passed.count == 9, "every event passes, the notes too")
        #expect(passed.first == .progress(index: 4, transferred: 229_376, total: 20_000_000))
    }
}
