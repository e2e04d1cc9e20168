import SyncrHTTP
import SyncrLock

/// The helper of one lead request: started from the lead's answer on the engine thread if the
/// file is to be split, and awaited by the entry's task once the lead has ended.
final class LeadHelper: Sendable {
    private struct State {
        var task: Task<Downloader.Helped, any Error>?
        /// The entry's task was cancelled: a helper started later starts cancelled.
        var cancelled = false
    }
    private let state = Locked(State())
    /// The lead's outcome, for the helper's connection that joins the pieces when it ends.
    let ended = OneShot<Result<HTTPResponse, TransferError>>()

    /// Starts the helper (once).
    func start(_ work: @escaping @Sendable () async throws -> Downloader.Helped) {
        state.withLock { s in
            guard s.task == nil else { return }
            let task = Task(operation: work)
            if s.cancelled { task.cancel() }
            s.task = task
        }
    }

    /// Cancels the helper, now or when it starts.
    func cancel() {
        state.withLock { s in
            s.cancelled = true
            return s.task
        }?.cancel()
    }

    /// Hands the lead's outcome to the helper and waits for it; nil if none was started. The
    /// helper is not a child of the waiting task: its cancellation is passed on here.
    func finish(with outcome: Result<HTTPResponse, TransferError>) async throws -> Downloader.Helped? {
        ended.fulfil(outcome)
        guard let task = state.withLock({ $0.task }) else { return nil }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { cancel() }
    }
}
