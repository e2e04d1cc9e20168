import SyncrLock

/// The checkpoint loop of one stream, started only once the answer shows a body large enough
/// to need one: a small file arrives whole before the first checkpoint would run, and a loop
/// for each of thousands of small files costs a task and a timer apiece.
final class CheckpointTicker: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var stopped = false
    }
    private let state = Locked(State())

    /// Starts the loop `make` returns, once; not after `stop`. Callable from any thread.
    func start(_ make: () -> Task<Void, Never>) {
        state.withLock { s in
            guard s.task == nil, !s.stopped else { return }
            s.task = make()
        }
    }

    /// Ends the loop and waits for a checkpoint it may be making.
    func stop() async {
        let task = state.withLock { s -> Task<Void, Never>? in
            s.stopped = true
            return s.task
        }
        task?.cancel()
        _ = await task?.value
    }
}
