import SyncrLock

/// A value that arrives once, from any thread, and can be awaited: the first `fulfil` wins.
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value??
        var waiters: [CheckedContinuation<Value?, Never>] = []
    }
    private let state = Locked(State(value: nil))

    /// Delivers the value (nil: "it will not come"); later calls do nothing.
    func fulfil(_ value: Value?) {
        let waiters = state.withLock { s -> [CheckedContinuation<Value?, Never>] in
            guard s.value == nil else { return [] }
            s.value = .some(value)
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(returning: value) }
    }

    func wait() async -> Value? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Value?? in
                if let v = s.value { return .some(v) }
                s.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
