/// What a sink says about the response it is about to receive, or about a piece of body.
public enum SinkDecision: Sendable {
    /// Go on.
    case proceed
    /// Not now: the sink took none of this piece. The transfer pauses (curl stops reading its
    /// socket) until the sink calls the handler given to `onResume`, and then the same piece is
    /// offered again. Only from `write`.
    case pause
    /// Stop the transfer without an error (e.g. a probe has seen enough).
    case stop
    /// Stop the transfer with this error.
    case fail(TransferError)
}

/// Receives the body of a successful (2xx) response, on the transfer engine's thread.
///
/// A sink is used for one transfer at a time; the engine calls `responseStarted` once per
/// transfer, before any `write`, and calls nothing after it returned `.stop` or `.fail`. When
/// the transfer has ended and the engine let go of it, the task that awaited it calls `settle`.
public protocol ResponseSink: AnyObject, Sendable {
    /// The final response's head is known; decide whether to accept its body.
    func responseStarted(_ head: HTTPResponseHead) -> SinkDecision
    /// A piece of body. Return `.proceed` once all of it is consumed, or `.pause` to take none
    /// of it now.
    func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision
    /// The transfer ended (however it ended) after the sink accepted the response. Called once,
    /// on the engine thread: it must not block.
    func finish() -> SinkDecision
    /// How a transfer paused by `.pause` is resumed; given before the first `write`. A sink
    /// that pauses must call it, from any thread, once it can take bytes again.
    func onResume(_ resume: @escaping @Sendable () -> Void)
    /// How the transfer feeding this sink is stopped from outside the task that awaits it
    /// (it then ends with `.cancelled`); given before the transfer starts, by a transport that
    /// can stop one. Callable from any thread.
    func onCancel(_ cancel: @escaping @Sendable () -> Void)
    /// Returns once everything the sink accepted is where it goes (in the file), with the
    /// error that kept it from getting there, if any. Called after every attempt (each
    /// redirect hop too) once the transport let go of it, from the task that awaited it,
    /// whether or not the sink accepted a response.
    func settle() async -> TransferError?
}

extension ResponseSink {
    public func finish() -> SinkDecision { .proceed }
    public func onResume(_ resume: @escaping @Sendable () -> Void) {}
    public func onCancel(_ cancel: @escaping @Sendable () -> Void) {}
    public func settle() async -> TransferError? { nil }
}

/// Reads a response head and throws any body away: for probes.
public final class DiscardSink: ResponseSink {
    public init() {}
    public func responseStarted(_ head: HTTPResponseHead) -> SinkDecision { .proceed }
    public func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision { .stop }
}
