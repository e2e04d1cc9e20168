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
