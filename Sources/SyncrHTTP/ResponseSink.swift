#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import SyncrLock

/// What a sink says about the response it is about to receive, or about a piece of body.
public enum SinkDecision: Sendable {
    /// Go on.
    case proceed
    /// Stop the transfer without an error (e.g. a probe has seen enough).
    case stop
    /// Stop the transfer with this error.
    case fail(TransferError)
}

/// Receives the body of a successful (2xx) response, on the transfer engine's thread.
///
/// A sink is used for one transfer at a time; the engine calls `responseStarted` once per
/// transfer, before any `write`, and calls nothing after it returned `.stop` or `.fail`.
public protocol ResponseSink: AnyObject, Sendable {
    /// The final response's head is known; decide whether to accept its body.
    func responseStarted(_ head: HTTPResponseHead) -> SinkDecision
    /// A piece of body. Return `.proceed` once all of it is consumed.
    func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision
    /// The transfer ended (however it ended) after the sink accepted the response: write out
    /// anything held back. Called once, on the engine thread.
    func finish() -> SinkDecision
}

extension ResponseSink {
    public func finish() -> SinkDecision { .proceed }
}

/// Reads a response head and throws any body away: for probes.
public final class DiscardSink: ResponseSink {
    public init() {}
    public func responseStarted(_ head: HTTPResponseHead) -> SinkDecision { .proceed }
    public func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision { .stop }
}

/// Writes a body into a file at a byte offset with positional writes, checking first that the
/// response is exactly the bytes that were asked for.
///
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

    private let writtenCounter = Atomic<Int64>(0)
    private let headBox = Locked<HTTPResponseHead?>(nil)

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

    /// libcurl hands over at most 16 KiB per call; collecting them into larger positional writes
    /// saves most of the system calls (65,536 `pwrite`s per GiB otherwise).
    /// Bytes received but not yet written; they sit right after `offset + written`. Locked: the
    /// engine thread writes, and a checkpoint on another thread may flush.
    private struct Pending {
        /// Allocated at the first write, so a sink that never writes costs nothing.
        var buffer: UnsafeMutableRawBufferPointer?
        var count = 0
    }
    private let pending = Locked(Pending())
    /// Largest positional write (and the memory a running transfer holds back).
    public static let coalesce = 256 * 1024

    deinit {
        pending.withLock { $0.buffer?.deallocate() }
    }

    /// Bytes written to the file so far by this transfer.
    public var written: Int64 { writtenCounter.load(ordering: .acquiring) }
    /// The response head, once the response started.
    public var head: HTTPResponseHead? { headBox.withLock { $0 } }

    public init(fd: Int32, offset: Int64, requestedRange: ByteRange?, expectedTotal: Int64?, ifRange: String? = nil,
                displayURL: String, displayPath: String, wholeFileAllowed: Bool = false,
                onResponse: (@Sendable (HTTPResponseHead, FileSink) -> Void)? = nil) {
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
        switch ResponseCheck.check(head, requested: requestedRange, expectedTotal: expectedTotal, ifRange: ifRange) {
        case .ok:
            onResponse?(head, self)
            return .proceed
        case .rangeIgnored: return .fail(.rangeNotHonoured(url: displayURL))
        case .invalid(let message): return .fail(.invalidResponse(url: displayURL, message: message))
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        guard var base = bytes.baseAddress else { return .proceed }
        let (_, allowed, shortened) = cursor.withLock { c -> (Int64, Int, Bool) in
            let position = offset + c.reserved
            let room = c.limit == Int64.max ? Int64(bytes.count) : max(0, c.limit - position)
            let n = Int(min(Int64(bytes.count), room))
            c.reserved += Int64(n)
            return (position, n, c.shortened)
        }
        if allowed < bytes.count && !shortened {
            return .fail(.invalidResponse(url: displayURL, message: "the server sent more bytes than the range asked for"))
        }
        var remaining = allowed
        let failure = pending.withLock { p -> TransferError? in
            while remaining > 0 {
                let buffer = p.buffer ?? .allocate(byteCount: Self.coalesce, alignment: 64)
                p.buffer = buffer
                let n = min(Self.coalesce - p.count, remaining)
                buffer.baseAddress!.advanced(by: p.count).copyMemory(from: base, byteCount: n)
                p.count += n
                base += n
                remaining -= n
                if p.count == Self.coalesce, let error = flush(&p) { return error }
            }
            return nil
        }
        if let failure { return .fail(failure) }
        // The limit was moved by `split`: the rest belongs to another connection.
        return allowed < bytes.count ? .stop : .proceed
    }

    public func finish() -> SinkDecision {
        pending.withLock { flush(&$0) }.map { .fail($0) } ?? .proceed
    }

    /// Writes out the bytes held back so far, so that a checkpoint can count them: a transfer
    /// that stalls would otherwise keep up to 256 KiB unwritten until it ends. Safe from any
    /// thread. Returns false when the write failed (the transfer will report it).
    @discardableResult
    public func writeHeldBytes() -> Bool {
        pending.withLock { flush(&$0) } == nil
    }

    /// Writes the held-back bytes at their place, then counts them as written. Call with
    /// `pending` locked.
    private func flush(_ p: inout Pending) -> TransferError? {
        guard p.count > 0, let buffer = p.buffer, var base = buffer.baseAddress else { return nil }
        var remaining = p.count
        var position = offset + writtenCounter.load(ordering: .relaxed)
        while remaining > 0 {
            let n = pwrite(fd, base, remaining, off_t(position))
            if n <= 0 {
                let code = n == 0 ? EIO : errno
                if code == EINTR { continue }
                // Keep only what is still unwritten, at the front: a later flush (finish, a
                // checkpoint) must write it at `offset + written`, not write again what landed.
                if remaining < p.count {
                    buffer.baseAddress!.copyMemory(from: base, byteCount: remaining)  // memmove: may overlap
                    p.count = remaining
                }
                return .local(path: displayPath, errno: code, message: "cannot write: " + String(cString: strerror(code)))
            }
            base += n
            remaining -= n
            position += Int64(n)
            writtenCounter.add(Int64(n), ordering: .releasing)
        }
        p.count = 0
        return nil
    }
}

/// Checks that a response to a (possibly ranged) GET is the bytes that were asked for.
public enum ResponseCheck: Equatable, Sendable {
    case ok
    /// 200 to a ranged request: the server will not resume.
    case rangeIgnored
    case invalid(String)

    /// - Parameters:
    ///   - requested: the `Range` that was sent, if any.
    ///   - expectedTotal: the resource size the caller knows of, if any.
    ///   - ifRange: the `If-Range` validator sent with it, if any.
    public static func check(_ head: HTTPResponseHead, requested: ByteRange?, expectedTotal: Int64?,
                             ifRange: String? = nil) -> ResponseCheck {
        guard let requested else {
            if head.status == 206 {
                return .invalid("206 Partial Content to a request without Range")
            }
            return .ok
        }
        if head.status == 200 {
            // A 200 to `bytes=0-` is the whole file, which is what was asked.
            return requested.start == 0 && requested.end == nil ? .ok : .rangeIgnored
        }
        guard head.status == 206 else { return .invalid("status \(head.status) to a Range request") }
        if let ifRange, let changed = otherVersion(head, ifRange: ifRange) { return .invalid(changed) }
        guard let raw = head.value("Content-Range") else {
            return .invalid("206 Partial Content without Content-Range")
        }
        guard let cr = ContentRange(parsing: raw), let first = cr.first, let last = cr.last else {
            return .invalid("malformed Content-Range \"\(raw.prefix(80))\"")
        }
        if first != requested.start {
            return .invalid("asked for bytes from \(requested.start), got Content-Range \"\(raw.prefix(80))\"")
        }
        if let end = requested.end, last != end {
            // A shorter answer than asked is allowed by RFC 9110, but only at the end of the
            // resource; anything else would leave a hole.
            if !(cr.total.map { last == $0 - 1 } ?? false) || last > end {
                return .invalid("asked for bytes \(requested.start)-\(end), got Content-Range \"\(raw.prefix(80))\"")
            }
        }
        if requested.end == nil, let total = cr.total, last != total - 1 {
            return .invalid("asked for bytes \(requested.start)- to the end, got Content-Range \"\(raw.prefix(80))\"")
        }
        if let expectedTotal, let total = cr.total, total != expectedTotal {
            return .invalid("the file is \(total) bytes now, \(expectedTotal) expected")
        }
        if let length = head.contentLength, let partLength = cr.length, length != partLength {
            return .invalid("Content-Length \(length) does not match Content-Range \"\(raw.prefix(80))\"")
        }
        return .ok
    }

    /// Why a 206 is not of the version `If-Range` named, if it says so. A server that honours
    /// Range but ignores If-Range (RFC 9110 §13.1.5 makes it a MUST) answers a changed file with
    /// a part of the new version, which must never be joined to the bytes of the old one. Only a
    /// validator of the same kind, present in the answer, is compared; a weak ETag says nothing.
    static func otherVersion(_ head: HTTPResponseHead, ifRange: String) -> String? {
        // An entity tag is sent quoted (`headerValue`); anything else is an HTTP date.
        if ifRange.hasPrefix("\""), let asked = EntityTag(parsing: ifRange) {
            guard let sent = head.etag, !sent.isWeak, !sent.strongMatch(asked) else { return nil }
            return "the file changed: the server sent ETag \(sent.headerValue.prefix(80)) for If-Range \(ifRange.prefix(80))"
        }
        guard let sent = head.lastModified, sent != ifRange else { return nil }
        return "the file changed: the server sent Last-Modified \"\(sent.prefix(80))\" for If-Range \"\(ifRange.prefix(80))\""
    }
}
