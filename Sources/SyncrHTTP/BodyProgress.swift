import Synchronization

/// How much of a request body curl has taken so far, for progress display: set on the engine
/// thread as curl reads the body, read from any task.
///
/// It follows the read position, so it goes back to 0 when curl rewinds the body (a redirect,
/// an authentication round) and when the request is attempted again. Once an attempt fails,
/// it is lowered to what is known to have reached the server: the bytes the peer's TCP (the
/// server's, or a proxy's between) acknowledged, else those curl wrote to the connection
/// (`Transfer.settleBodyProgress`).
public final class BodyProgress: Sendable {
    private let position = Atomic<Int64>(0)

    public init() {}

    /// Bytes of the body handed to curl in the current attempt; after a failed one, those known
    /// to have reached the server.
    public var sent: Int64 { position.load(ordering: .relaxed) }

    /// Back to 0, for the next request that reports here.
    public func reset() { position.store(0, ordering: .relaxed) }

    func update(_ value: Int64) { position.store(value, ordering: .relaxed) }
}
