import SyncrLock

extension Session {
    /// Maps with at most `width` operations in flight, keeping the input order.
    ///
    /// `width` worker tasks each take the next input in turn until none is left, rather than
    /// one child task per input: a run over thousands of entries then creates no task per
    /// entry, and the caller is not woken as each one ends (each was a hand-off to another
    /// thread, which on two cores cost more than the task itself).
    static func mapBounded<C: RandomAccessCollection & Sendable, R: Sendable>(
        _ input: C, width: Int, _ transform: @escaping @Sendable (C.Element) async -> R
    ) async -> [R] where C.Index == Int, C.Element: Sendable {
        await mapBounded(input, width: width, worker: {}, before: { _ in }, after: { _ in }) { _, element in
            await transform(element)
        }
    }

    /// `mapBounded` whose workers each carry a value of their own (`worker()`), handed to every
    /// transform they run: `before` runs ahead of each input a worker takes (and once more ahead
    /// of finding none left), `after` once the worker is done. `apply` gives each worker its hold
    /// on a turn (`Session.turns`): a worker takes its turn before it takes an entry, so workers
    /// that find every turn held wait with no entry of theirs waiting too.
    static func mapBounded<C: RandomAccessCollection & Sendable, R: Sendable, W: Sendable>(
        _ input: C, width: Int, worker: @escaping @Sendable () -> W,
        before: @escaping @Sendable (W) async -> Void, after: @escaping @Sendable (W) async -> Void,
        _ transform: @escaping @Sendable (W, C.Element) async -> R
    ) async -> [R] where C.Index == Int, C.Element: Sendable {
        let gather = OrderedGather<R>(count: input.count)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(max(1, width), input.count) {
                group.addTask {
                    let own = worker()
                    while true {
                        await before(own)
                        guard let offset = gather.claim() else { break }
                        gather.deliver(offset, await transform(own, input[input.startIndex + offset]))
                    }
                    await after(own)
                }
            }
        }
        return gather.take()
    }
}

/// Hands out the offsets of an input in order and collects their results in that order.
///
/// Results join the array as they come; the few that finish ahead of an earlier one wait
/// aside, so the results are never held twice (an array of optionals unwrapped at the end
/// would be).
final class OrderedGather<R: Sendable>: Sendable {
    private struct State {
        var next = 0
        var results: [R] = []
        var ahead: [Int: R] = [:]
    }

    private let count: Int
    private let state: Locked<State>

    init(count: Int) {
        self.count = count
        var state = State()
        state.results.reserveCapacity(count)
        self.state = Locked(state)
    }

    /// The next offset to work on, or nil when every one was handed out.
    func claim() -> Int? {
        state.withLock { s in
            guard s.next < count else { return nil }
            defer { s.next += 1 }
            return s.next
        }
    }

    func deliver(_ offset: Int, _ result: R) {
        state.withLock { s in
            s.ahead[offset] = result
            while let done = s.ahead.removeValue(forKey: s.results.count) { s.results.append(done) }
        }
    }

    /// The results in input order, once every offset was delivered.
    func take() -> [R] {
        state.withLock { s in
            precondition(s.ahead.isEmpty && s.results.count == count, "a result is missing")
            defer { s.results = [] }
            return s.results
        }
    }
}
