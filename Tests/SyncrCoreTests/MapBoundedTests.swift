import Testing
import SyncrLock
@testable import SyncrCore

/// `Session.mapBounded`, which runs every entry of plan and apply: results in input order
/// whatever order the work finishes in, and never more than `width` at once.
@Suite(.timeLimit(.minutes(10))) struct MapBoundedTests {
    @Test(arguments: [1, 3, 16])
    func keepsTheInputOrderWhenLaterItemsFinishFirst(width: Int) async {
        let input = Array(0..<40)
        let running = Locked((now: 0, most: 0))
        let output = await Session.mapBounded(input, width: width) { n -> String in
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            // Earlier items yield more often, so later ones overtake them.
            for _ in 0..<((40 - n) % 7) { await Task.yield() }
            running.withLock { $0.now -= 1 }
            return "item \(n)"
        }
        #expect(output == input.map { "item \($0)" })
        #expect(running.withLock { $0.most } <= width)
    }

    @Test func anEmptyInputGivesNoResults() async {
        let output = await Session.mapBounded([Int](), width: 4) { $0 }
        #expect(output.isEmpty)
    }
}
