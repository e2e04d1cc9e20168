import SyncrLock

/// Keeps the first bytes of a 2xx body and drops the rest: for uploads, whose answer is not
/// needed beyond a line for the report (e.g. a server's "stored 123 bytes" or a JSON receipt).
public final class BodyPrefixSink: ResponseSink {
    /// The most bytes kept.
    public let limit: Int
    private let kept = Locked<[UInt8]>([])

    public init(limit: Int = 1024) {
        self.limit = limit
    }

    /// The bytes kept so far.
    public var bytes: [UInt8] { kept.withLock { $0 } }

    /// The bytes kept, printable (control characters removed, see `HTTPResponse.printable`).
    public var text: String { HTTPResponse.printable(bytes, limit: limit) }

    public func responseStarted(_ head: HTTPResponseHead) -> SinkDecision { .proceed }

    public func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        kept.withLock { buffer in
            let room = limit - buffer.count
            if room > 0 { buffer.append(contentsOf: bytes.prefix(room)) }
        }
        // Reading the rest of a long answer keeps the connection reusable.
        return .proceed
    }
}
