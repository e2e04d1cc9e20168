import SyncrLock

/// Writes a body into a file at a byte offset with positional writes, checking first that the
/// response is exactly the bytes that were asked for.
///
/// The bytes are written on a `DiskWriter` thread, never on the engine thread (`WriteBehind`).
/// `written` is read by other tasks to checkpoint progress: it only counts bytes whose `pwrite`
/// has returned, so after `fdatasync` everything it counts is on disk.
public final class FileSink: ResponseSink {
    /// The file descriptor; owned by the caller, who keeps it open until the transfer ends.
    public let fd: Int32
    /// Where the first body byte goes in the file.
    public let offset: Int64
    /// The range that was requested, if any; a 206 must answer exactly this.
    public let requestedRange: ByteRange?
    /// The total size the caller expects (from a probe or the state file), if known.
    public let expectedTotal: Int64?
    /// The `If-Range` validator sent with `requestedRange`, if any: a 206 must be of that version.
    public let ifRange: String?
    public let displayURL: String
    public let displayPath: String
    /// Called on the engine thread once the response was checked and accepted, with this sink.
    private let onResponse: (@Sendable (HTTPResponseHead, FileSink) -> Void)?
    /// Whether a 200 (the whole file) is a good answer to a Range from byte 0: true for a first
    /// request that asked for only the start of a file of unknown size. Never with If-Range,
    /// where a 200 means the file changed.
    private let wholeFileAllowed: Bool
    /// Whether the answer came from the place the cached bytes came from (given the answer's
    /// URL after redirects); nil when it need not be asked. Set where only a date vouches for
    /// the version: a redirect that now leads to another file of the same size and date (a
    /// "latest" link) would otherwise be joined to the bytes of the first.
    private let sameSource: (@Sendable (String) -> Bool)?

    private let headBox = Locked<HTTPResponseHead?>(nil)
    /// Stops the transfer that feeds this sink (see `cancelTransfer`), while it runs.
    private let canceller = Locked<(@Sendable () -> Void)?>(nil)

    /// Where the next write goes and where writing must stop. Bytes are reserved under the lock
    /// before they are written, so a `split` never hands out a byte this sink will still write.
    private struct Cursor {
        /// Bytes reserved from `offset` (written, or being written).
        var reserved: Int64 = 0
        /// The file offset writing stops at (exclusive).
        var limit: Int64
        /// Whether `split` moved the limit: reaching it then ends the transfer without error.
        var shortened = false
    }
    private let cursor: Locked<Cursor>

    /// The bytes received and not yet written, and their writing.
    private let behind: WriteBehind
    /// The largest positional write: a body up to this size is written in one.
    public static let coalesce = WriteBehind.bufferSize

    /// Bytes written to the file so far by this transfer.
    public var written: Int64 { behind.written }
    /// The response head, once the response started.
    public var head: HTTPResponseHead? { headBox.withLock { $0 } }

    /// - Parameters:
    ///   - writer: the threads that write the bytes (tests pass one that plays a slow disk).
    ///   - writeBack: the file will be flushed when the transfer is done: start the disk's
    ///     writing of its bytes as they are written (every 8 MiB), so the flush has little left.
    ///   - sameSource: see `sameSource`.
    public init(fd: Int32, offset: Int64, requestedRange: ByteRange?, expectedTotal: Int64?, ifRange: String? = nil,
                displayURL: String, displayPath: String, wholeFileAllowed: Bool = false,
                writer: DiskWriter = .shared, writeBack: Bool = false,
                onResponse: (@Sendable (HTTPResponseHead, FileSink) -> Void)? = nil,
                sameSource: (@Sendable (String) -> Bool)? = nil) {
        self.sameSource = sameSource
        behind = WriteBehind(fd: fd, offset: offset, displayPath: displayPath, writer: writer,
                             writeBack: writeBack ? WriteBehind.writeBackStep : nil)
        self.onResponse = onResponse
        self.wholeFileAllowed = wholeFileAllowed && offset == 0 && requestedRange?.start == 0
        self.fd = fd
        self.offset = offset
        self.requestedRange = requestedRange
        self.expectedTotal = expectedTotal
        self.ifRange = ifRange
        self.displayURL = displayURL
        self.displayPath = displayPath
        // The limit counts the range's length from `offset`, wherever in the file that is.
        let limit = requestedRange.flatMap { r in r.end.map { offset + ($0 - r.start + 1) } } ?? Int64.max
        cursor = Locked(Cursor(limit: limit))
    }

    /// The file offset this sink stops at (exclusive); `Int64.max` when open-ended.
    public var limit: Int64 { cursor.withLock { $0.limit } }

    /// Gives an open-ended transfer its end (exclusive file offset), once the size is known,
    /// so that `split` can hand parts of it to other connections.
    public func bound(to end: Int64) {
        cursor.withLock { c in
            if c.limit == Int64.max { c.limit = end }
        }
    }

    /// Whether `split` gave part of this transfer away: it will be cut short of what it asked
    /// for, so the bytes the server already sent past its limit are lost whatever else is
    /// taken from it.
    public var isShortened: Bool { cursor.withLock { $0.shortened } }

    /// Bytes this transfer has received and kept so far, written or still held back: its pace.
    public var received: Int64 { cursor.withLock { $0.reserved } }

    /// Bytes between the write position and the limit.
    public var remaining: Int64 { cursor.withLock { $0.limit == Int64.max ? Int64.max : $0.limit - offset - $0.reserved } }

    /// Gives away the second half of what this sink has left to write, if that half is at least
    /// `minimum` bytes: this sink then stops at the split point, and the returned range (file
    /// offsets, inclusive end) is for another connection. Used so that a connection that finished
    /// early helps the slowest one instead of idling.
    public func split(minimum: Int64) -> ByteRange? {
        cursor.withLock { c in
            guard c.limit != Int64.max else { return nil }
            let position = offset + c.reserved
            let left = c.limit - position
            guard left >= 2 * minimum else { return nil }
            let middle = position + left / 2
            let stolen = ByteRange(start: middle, end: c.limit - 1)
            c.limit = middle
            c.shortened = true
            return stolen
        }
    }

    public func responseStarted(_ head: HTTPResponseHead) -> SinkDecision {
        headBox.withLock { $0 = head }
        if let encoding = head.contentEncoding {
            return .fail(.invalidResponse(url: displayURL,
                message: "the server sent the body with Content-Encoding: \(encoding), so its bytes are not the file's bytes"))
        }
        if wholeFileAllowed && head.status == 200 {
            // The whole file, which holds the start that was asked for: keep all of it.
            cursor.withLock { $0.limit = Int64.max }
            onResponse?(head, self)
            return .proceed
        }
        if let sameSource, !sameSource(head.effectiveURL) {
            return .fail(.invalidResponse(url: displayURL,
                message: "the URL now leads to another place than the cached bytes came from, and only a date tells the versions apart"))
        }
        switch ResponseCheck.check(head, requested: requestedRange, expectedTotal: expectedTotal, ifRange: ifRange) {
        case .ok:
            onResponse?(head, self)
            return .proceed
        case .rangeIgnored: return .fail(.rangeNotHonoured(url: displayURL))
        case .invalid(let message): return .fail(.invalidResponse(url: displayURL, message: message))
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        guard bytes.baseAddress != nil else { return .proceed }
        switch behind.write(bytes, reserve: reserve) {
        case .took(let n):
            // The limit was moved by `split`: the rest belongs to another connection.
            return n < bytes.count ? .stop : .proceed
        case .pause: return .pause
        case .fail(let error): return .fail(error)
        case .refused:
            return .fail(.invalidResponse(url: displayURL, message: "the server sent more bytes than the range asked for"))
        }
    }

    /// How many of `count` bytes this transfer keeps, reserved so that `split` never hands them
    /// out; nil when the server sent more than the range asked for.
    private func reserve(_ count: Int) -> Int? {
        cursor.withLock { c -> Int? in
            let position = offset + c.reserved
            let room = c.limit == Int64.max ? Int64(count) : max(0, c.limit - position)
            let n = Int(min(Int64(count), room))
            if n < count && !c.shortened { return nil }
            c.reserved += Int64(n)
            return n
        }
    }

    public func finish() -> SinkDecision {
        behind.seal().map { .fail($0) } ?? .proceed
    }

    public func onResume(_ resume: @escaping @Sendable () -> Void) {
        behind.onResume(resume)
    }

    public func onCancel(_ cancel: @escaping @Sendable () -> Void) {
        canceller.withLock { $0 = cancel }
    }

    /// Stops the transfer feeding this sink, from any task or thread: it ends with
    /// `.cancelled`. Lets the task that split a transfer's file stop that transfer without
    /// owning the task that awaits it. Does nothing once the transfer is over.
    public func cancelTransfer() {
        canceller.withLock { $0 }?()
    }

    public func settle() async -> TransferError? {
        // The transfer is over; the handler (which holds it) must not outlive it.
        canceller.withLock { $0 = nil }
        return await behind.settle()
    }

    /// Hands the bytes held back so far to the writer, so that a checkpoint soon counts them:
    /// a transfer that stalls would otherwise keep up to 256 KiB unwritten until it ends. Safe
    /// from any thread; does not wait. Returns false once a write failed (the transfer will
    /// report it).
    @discardableResult
    public func writeHeldBytes() -> Bool {
        behind.writeHeld()
    }
}
