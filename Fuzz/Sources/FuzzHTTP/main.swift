// Fuzz target: server text -> the SyncrHTTP parsers (Content-Range, Retry-After / HTTP-date,
// ETag, Content-Length, Accept-Ranges, Content-Encoding) and the checks built on them
// (ResponseCheck, RemoteResource, statusError, printable bodies).
//
// Input: first byte picks the status; the rest is header lines as curl hands them over, split
// at the first colon as `Transfer.headerLine` does. Every value is also parsed on its own.
#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import SyncrHTTP

private enum Fixed {
    static let statuses = [200, 206, 416, 429, 503, 301, 404, 0]
    static let now: Int64 = 1_780_000_000
}

runFuzzer(fuzz)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let status = Fixed.statuses[Int(data[0]) % Fixed.statuses.count]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: bytes, as: UTF8.self)

    var fields: [HTTPResponseHead.HeaderField] = []
    // One line per callback, as curl hands them over: up to and including the line feed.
    var lines: [String] = []
    var start = 0
    for (i, b) in bytes.enumerated() where b == 0x0A {
        lines.append(String(decoding: bytes[start...i], as: UTF8.self))
        start = i + 1
    }
    if start < bytes.count { lines.append(String(decoding: bytes[start...], as: UTF8.self)) }
    for line in lines {
        if line.hasPrefix("HTTP/") { fields = []; continue }
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = String(line[..<colon])
        let value = String(line[line.index(after: colon)...])
        guard !name.isEmpty else { continue }
        fields.append(.init(name: name, value: value))
        parseAlone(value)
    }
    parseAlone(text)

    let head = HTTPResponseHead(status: status, fields: fields, effectiveURL: "http://127.0.0.1/f")
    let summary = describe(head)
    _ = head.acceptsByteRanges
    // Blanks around a value do not change what it says (curl hands over lines ending in CRLF,
    // or a bare LF from a sloppy server; either way the line break is not part of the value).
    for padding in [" ", "\t", "\r\n", "\n", "\r", " \r\n"] {
        let padded = HTTPResponseHead(status: status, fields: fields.map { .init(name: $0.name, value: padding + $0.value + padding) },
                                      effectiveURL: head.effectiveURL)
        let other = describe(padded)
        invariant(other == summary, "padding values with \(Array(padding.unicodeScalars)) changes them:\n\(summary)\n---\n\(other)")
    }

    for requested in [nil, ByteRange(start: 0), ByteRange(start: 0, end: 0), ByteRange(start: 100, end: 199),
                      head.contentRange?.first.map { ByteRange(start: $0, end: head.contentRange?.last) }] {
        let check = ResponseCheck.check(head, requested: requested, expectedTotal: head.contentRange?.total)
        if check == .ok, let requested, status == 206, let range = head.contentRange {
            invariant(range.first == requested.start, "accepted a part that starts elsewhere")
        }
        _ = ResponseCheck.check(head, requested: requested, expectedTotal: 1234)
    }
    let resource = RemoteResource(head: head, method: "HEAD")
    if let size = resource.size { invariant(size >= 0, "negative size \(size)") }
    _ = resource.ifRangeValidator

    let response = HTTPResponse(head: head, bodyBytes: Int64(bytes.count), stoppedEarly: false,
                                errorBody: HTTPResponse.printable(bytes), uploadedBytes: 0)
    if let error = response.statusError(url: "http://127.0.0.1/f") { _ = "\(error)" }
    let printable = HTTPResponse.printable(bytes, limit: 40)
    invariant(printable.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7f },
              "printable text holds a control character")
    return 0
}

private func parseAlone(_ value: String) {
    if let range = ContentRange(parsing: value) {
        if let first = range.first {
            invariant(range.last != nil && first <= range.last!, "first after last in \(range)")
            if let total = range.total { invariant(range.last! < total, "last beyond total in \(range)") }
            invariant(range.length! >= 1, "empty part in \(range)")
        } else {
            invariant(range.last == nil && range.total != nil, "no range and no total in \(range)")
        }
    }
    if let tag = EntityTag(parsing: value) {
        let again = EntityTag(parsing: tag.headerValue)
        invariant(again == tag, "\(tag.headerValue) does not parse back to itself: \(String(describing: again))")
        invariant(tag.weakMatch(tag), "a tag does not match itself")
    }
    if let after = RetryAfter(parsing: value) {
        invariant(after.delay(now: Fixed.now) >= 0, "negative delay")
    }
    _ = HTTPDate.parse(value)
    _ = ContentType.forFilename(value)
}

private func describe(_ head: HTTPResponseHead) -> String {
    "length=\(String(describing: head.contentLength)) range=\(String(describing: head.contentRange)) etag=\(String(describing: head.etag)) modified=\(String(describing: head.lastModified)) encoding=\(String(describing: head.contentEncoding)) size=\(String(describing: head.resourceSize)) retry=\(String(describing: head.value("Retry-After").flatMap(RetryAfter.init(parsing:))))"
}
