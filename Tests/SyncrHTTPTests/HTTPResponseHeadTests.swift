import Testing
@testable import SyncrHTTP

@Suite("HTTPResponseHead helpers", .timeLimit(.minutes(10)))
struct HTTPResponseHeadTests {
    @Test("value(_:) matches header names case-insensitively and returns the first")
    func valueLookup() {
        let h = makeHead(200, [("Content-Length", "10"), ("ETAG", "\"a\""), ("etag", "\"b\""), ("X-Empty", "")])
        #expect(h.value("content-length") == "10")
        #expect(h.value("CONTENT-LENGTH") == "10")
        #expect(h.value("ETag") == "\"a\"")
        #expect(h.value("X-Empty") == "")
        #expect(h.value("Content-Range") == nil)
        #expect(h.value("Content") == nil)
    }

    @Test("isSuccess is 2xx only", arguments: [
        (200, true), (204, true), (206, true), (299, true),
        (0, false), (100, false), (199, false), (300, false), (304, false), (404, false), (500, false),
    ])
    func isSuccess(_ status: Int, _ expected: Bool) {
        #expect(makeHead(status).isSuccess == expected)
    }

    @Test("contentLength accepts a non-negative integer", arguments: [
        ("0", Int64(0)),
        ("1000", Int64(1000)),
        (" 42 ", Int64(42)),
        ("42\r\n", Int64(42)),
        ("007", Int64(7)),
        ("999999999999999999", Int64(999_999_999_999_999_999)),  // 18 digits, as Content-Range takes
    ])
    func contentLengthValid(_ text: String, _ value: Int64) {
        #expect(makeHead(200, [("Content-Length", text)]).contentLength == value)
    }

    @Test("contentLength is nil for anything else", arguments: [
        "", " ", "-1", "abc", "12abc", "1.5", "1e3", "0x10",
        "9223372036854775808",          // overflows Int64
        "9223372036854775807",          // Int64.max: no file's size; sums of such sizes would trap
        "1000000000000000000",          // 10^18, past what Content-Range takes
        "99999999999999999999",
        "10, 10",                       // a list, even of equal values, is not taken
        "10 10",
    ])
    func contentLengthInvalid(_ text: String) {
        #expect(makeHead(200, [("Content-Length", text)]).contentLength == nil)
    }

    @Test("contentLength is nil without the header, and found in any case")
    func contentLengthHeaderName() {
        #expect(makeHead(200).contentLength == nil)
        #expect(makeHead(200, [("content-length", "5")]).contentLength == 5)
    }

    @Test("acceptsByteRanges", arguments: [
        ("bytes", true),
        ("Bytes", true),
        ("BYTES", true),
        (" bytes ", true),
        ("bytes, other", true),
        ("other, bytes", true),
        ("other,bytes", true),
        ("other ,\tbytes", true),
        ("none", false),
        ("None", false),
        ("", false),
        ("bytesx", false),
        ("bytes-ish", false),
        ("other", false),
        ("none, other", false),
        // The list is split at every comma byte (RFC 9110 §5.6.1), also where a combining mark
        // or a prepended scalar would join the comma into one Character with its neighbour.
        ("bytes,\u{301}", true),
        ("\u{600},bytes", true),
        ("bytes\u{301}", false),
    ])
    func acceptsByteRanges(_ value: String, _ expected: Bool) {
        #expect(makeHead(200, [("Accept-Ranges", value)]).acceptsByteRanges == expected)
        #expect(makeHead(200, [("accept-ranges", value)]).acceptsByteRanges == expected)
    }

    @Test("acceptsByteRanges is false without the header")
    func acceptsByteRangesMissing() {
        #expect(!makeHead(200, [("Content-Length", "1")]).acceptsByteRanges)
    }

    @Test("contentEncoding ignores identity and normalises case", arguments: [
        ("gzip", String?("gzip")),
        ("GZip ", String?("gzip")),
        ("br", String?("br")),
        ("deflate", String?("deflate")),
        ("identity", String?.none),
        ("IDENTITY", String?.none),
        ("", String?.none),
        ("  ", String?.none),
    ])
    func contentEncoding(_ value: String, _ expected: String?) {
        #expect(makeHead(200, [("Content-Encoding", value)]).contentEncoding == expected)
    }

    @Test("contentEncoding is nil without the header")
    func contentEncodingMissing() {
        #expect(makeHead(200).contentEncoding == nil)
    }

    @Test("resourceSize: Content-Length of a 200, Content-Range total of a 206 or 416")
    func resourceSize() {
        #expect(makeHead(200, [("Content-Length", "1000")]).resourceSize == 1000)
        #expect(makeHead(200).resourceSize == nil)
        #expect(makeHead(206, [("Content-Range", "bytes 0-0/1234"), ("Content-Length", "1")]).resourceSize == 1234)
        #expect(makeHead(206, [("Content-Range", "bytes 100-199/1234"), ("Content-Length", "100")]).resourceSize == 1234)
        // A 206's Content-Length is the part's, never the resource's.
        #expect(makeHead(206, [("Content-Range", "bytes 0-0/*"), ("Content-Length", "1")]).resourceSize == nil)
        #expect(makeHead(206, [("Content-Length", "1")]).resourceSize == nil)
        #expect(makeHead(206, [("Content-Range", "nonsense"), ("Content-Length", "1")]).resourceSize == nil)
        #expect(makeHead(416, [("Content-Range", "bytes */1234")]).resourceSize == 1234)
        #expect(makeHead(416).resourceSize == nil)
        #expect(makeHead(204, [("Content-Length", "0")]).resourceSize == nil)
        #expect(makeHead(404, [("Content-Length", "50")]).resourceSize == nil)
    }

    @Test("contentRange, etag and lastModified parse their headers")
    func parsedHeaders() {
        let h = makeHead(206, [("Content-Range", "bytes 0-9/100"), ("ETag", "W/\"v1\""),
                               ("Last-Modified", "  Sun, 06 Nov 1994 08:49:37 GMT ")])
        #expect(h.contentRange == ContentRange(first: 0, last: 9, total: 100))
        #expect(h.etag == EntityTag(opaque: "v1", isWeak: true))
        #expect(h.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")

        let empty = makeHead(200, [("ETag", "\"broken"), ("Last-Modified", "   ")])
        #expect(empty.contentRange == nil)
        #expect(empty.etag == nil)
        #expect(empty.lastModified == nil)
    }

    /// Names match whatever the case of their letters, and only of their letters: `[` and `{`
    /// differ by the same bit as `a` and `A`.
    @Test func headerNamesMatchIgnoringTheCaseOfLettersOnly() {
        #expect(HTTPResponseHead.sameASCII("Content-Length", "content-length"))
        #expect(HTTPResponseHead.sameASCII("X-AMZ-Meta-1", "x-amz-meta-1"))
        #expect(!HTTPResponseHead.sameASCII("Content-Length", "Content-Lengths"))
        #expect(!HTTPResponseHead.sameASCII("Content-Length", "Content-Lengtg"))
        #expect(!HTTPResponseHead.sameASCII("a[b", "a{b"))
        #expect(!HTTPResponseHead.sameASCII("a@b", "a`b"))
        let head = HTTPResponseHead(status: 200, fields: [.init(name: "ETAG", value: "\"x\""), .init(name: "etag", value: "\"y\"")],
                                    effectiveURL: "http://h/")
        #expect(head.value("ETag") == "\"x\"", "the first of repeated fields")
    }

    @Test(arguments: [("bytes", true), (" Bytes , none", true), ("none,\tBYTES\t", true), ("none", false),
                      ("bytesx", false), ("", false)])
    func acceptRangesNamesBytesAsAToken(value: String, accepts: Bool) {
        let head = HTTPResponseHead(status: 200, fields: [.init(name: "accept-ranges", value: value)], effectiveURL: "http://h/")
        #expect(head.acceptsByteRanges == accepts)
    }
}
