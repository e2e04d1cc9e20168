import Testing
@testable import SyncrHTTP

@Suite("ResponseCheck.check", .timeLimit(.minutes(10)))
struct ResponseCheckTests {
    static func partial(_ contentRange: String?, length: String? = nil) -> HTTPResponseHead {
        var fields: [(String, String)] = []
        if let contentRange { fields.append(("Content-Range", contentRange)) }
        if let length { fields.append(("Content-Length", length)) }
        return makeHead(206, fields)
    }

    static func isInvalid(_ r: ResponseCheck) -> Bool {
        if case .invalid = r { return true }
        return false
    }

    // MARK: no Range sent

    @Test("no Range and 200 is ok")
    func plain200() {
        #expect(ResponseCheck.check(makeHead(200, [("Content-Length", "1000")]),
                                    requested: nil, expectedTotal: nil) == .ok)
        #expect(ResponseCheck.check(makeHead(200), requested: nil, expectedTotal: 1000) == .ok)
    }

    @Test("no Range and 206 is invalid")
    func unaskedPartial() {
        let r = ResponseCheck.check(Self.partial("bytes 0-999/1000"), requested: nil, expectedTotal: nil)
        #expect(Self.isInvalid(r))
    }

    // MARK: open range bytes=100-

    @Test("bytes=100- answered 206 with the exact Content-Range is ok", arguments: [
        ("bytes 100-999/1000", "900", Int64?(1000)),
        ("bytes 100-999/1000", "900", Int64?.none),
        ("bytes 100-999/1000", nil, Int64?(1000)),
        ("bytes 100-999/*", "900", Int64?.none),         // unknown total: nothing to compare
        ("bytes 100-999/*", "900", Int64?(1000)),
        ("Bytes  100-999/1000", "900", Int64?(1000)),
    ] as [(String, String?, Int64?)])
    func openRangeOK(_ cr: String, _ length: String?, _ expected: Int64?) {
        let r = ResponseCheck.check(Self.partial(cr, length: length),
                                    requested: ByteRange(start: 100), expectedTotal: expected)
        #expect(r == .ok)
    }

    @Test("bytes=100- answered 206 with anything else is invalid", arguments: [
        ("bytes 0-999/1000", "1000", Int64?(1000)),       // wrong start (earlier)
        ("bytes 200-999/1000", "800", Int64?(1000)),      // wrong start (later): a hole
        ("bytes 100-998/1000", "899", Int64?(1000)),      // does not reach the end
        ("bytes 100-499/1000", "400", Int64?.none),
        ("bytes 100-1999/2000", "1900", Int64?(1000)),    // the file changed size
        ("bytes 100-499/500", "400", Int64?(1000)),       // ... and shrank
        ("bytes 100-999/1000", "901", Int64?(1000)),      // Content-Length disagrees
        ("bytes 100-999/1000", "0", Int64?(1000)),
        ("bytes */1000", "0", Int64?(1000)),              // unsatisfied form in a 206
        ("bytes 100-999", "900", Int64?(1000)),           // malformed
        ("bytes 100-99/1000", nil, Int64?(1000)),
        ("bytes 100-1000/1000", nil, Int64?(1000)),
        ("garbage", nil, Int64?.none),
        ("", nil, Int64?.none),
    ] as [(String, String?, Int64?)])
    func openRangeInvalid(_ cr: String, _ length: String?, _ expected: Int64?) {
        let r = ResponseCheck.check(Self.partial(cr, length: length),
                                    requested: ByteRange(start: 100), expectedTotal: expected)
        #expect(Self.isInvalid(r), "got \(r)")
    }

    @Test("206 without Content-Range is invalid")
    func missingContentRange() {
        let r = ResponseCheck.check(Self.partial(nil, length: "900"),
                                    requested: ByteRange(start: 100), expectedTotal: 1000)
        #expect(Self.isInvalid(r))
        // multipart/byteranges carries its ranges in the body, not in a header
        let multi = makeHead(206, [("Content-Type", "multipart/byteranges; boundary=x")])
        #expect(Self.isInvalid(ResponseCheck.check(multi, requested: ByteRange(start: 100), expectedTotal: nil)))
    }

    @Test("the Content-Range header name is matched case-insensitively")
    func headerNameCase() {
        let h = makeHead(206, [("content-range", "bytes 100-999/1000")])
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 100), expectedTotal: 1000) == .ok)
    }

    // MARK: 200 to a Range

    @Test("200 to bytes=100- means the range was ignored")
    func rangeIgnored() {
        let h = makeHead(200, [("Content-Length", "1000")])
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 100), expectedTotal: 1000) == .rangeIgnored)
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 0, end: 99), expectedTotal: nil) == .rangeIgnored)
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 1, end: nil), expectedTotal: nil) == .rangeIgnored)
    }

    @Test("200 to bytes=0- is the whole file, which is what was asked")
    func wholeFileForZeroOpen() {
        let h = makeHead(200, [("Content-Length", "1000")])
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 0), expectedTotal: nil) == .ok)
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 0), expectedTotal: 1000) == .ok)
    }

    @Test("bytes=0- answered 206 for the whole file is ok")
    func zeroOpenPartial() {
        let h = Self.partial("bytes 0-999/1000", length: "1000")
        #expect(ResponseCheck.check(h, requested: ByteRange(start: 0), expectedTotal: 1000) == .ok)
    }

    // MARK: other statuses

    @Test("statuses other than 200/206 to a Range request are invalid", arguments: [416, 204, 203, 201, 304, 500])
    func otherStatus(_ status: Int) {
        let h = makeHead(status, [("Content-Range", "bytes */1000")])
        #expect(Self.isInvalid(ResponseCheck.check(h, requested: ByteRange(start: 100), expectedTotal: 1000)))
    }

    // MARK: closed range bytes=0-99

    @Test("bytes=0-99 answered 0-99/1000 is ok")
    func closedExact() {
        #expect(ResponseCheck.check(Self.partial("bytes 0-99/1000", length: "100"),
                                    requested: ByteRange(start: 0, end: 99), expectedTotal: 1000) == .ok)
        #expect(ResponseCheck.check(Self.partial("bytes 0-99/*"),
                                    requested: ByteRange(start: 0, end: 99), expectedTotal: nil) == .ok)
    }

    @Test("bytes=0-99 answered 0-49/50 (shorter, at the end of the resource) is ok")
    func closedShorterAtEnd() {
        #expect(ResponseCheck.check(Self.partial("bytes 0-49/50", length: "50"),
                                    requested: ByteRange(start: 0, end: 99), expectedTotal: nil) == .ok)
        #expect(ResponseCheck.check(Self.partial("bytes 0-49/50"),
                                    requested: ByteRange(start: 0, end: 99), expectedTotal: 50) == .ok)
    }

    @Test("bytes=0-99 answered otherwise is invalid", arguments: [
        ("bytes 0-49/1000", Int64?.none),         // shorter in the middle: a hole
        ("bytes 0-49/*", Int64?.none),            // shorter and the end is unknown
        ("bytes 0-149/1000", Int64?.none),        // longer than asked
        ("bytes 0-149/150", Int64?.none),         // longer, even at the end
        ("bytes 1-99/1000", Int64?.none),         // wrong start
        ("bytes 0-99/2000", Int64?(1000)),        // wrong total
        ("bytes 0-49/50", Int64?(1000)),          // shorter at the end, but the file shrank
    ])
    func closedInvalid(_ cr: String, _ expected: Int64?) {
        let r = ResponseCheck.check(Self.partial(cr), requested: ByteRange(start: 0, end: 99), expectedTotal: expected)
        #expect(Self.isInvalid(r), "got \(r)")
    }

    @Test("a closed range in the middle: bytes=500-999")
    func closedMiddle() {
        let req = ByteRange(start: 500, end: 999)
        #expect(ResponseCheck.check(Self.partial("bytes 500-999/5000", length: "500"), requested: req, expectedTotal: 5000) == .ok)
        #expect(ResponseCheck.check(Self.partial("bytes 500-799/800", length: "300"), requested: req, expectedTotal: nil) == .ok)
        #expect(Self.isInvalid(ResponseCheck.check(Self.partial("bytes 500-999/5000", length: "499"), requested: req, expectedTotal: 5000)))
        #expect(Self.isInvalid(ResponseCheck.check(Self.partial("bytes 400-999/5000"), requested: req, expectedTotal: 5000)))
    }

    @Test("the probe request bytes=0-0")
    func probeRange() {
        let req = ByteRange(start: 0, end: 0)
        #expect(ResponseCheck.check(Self.partial("bytes 0-0/1234", length: "1"), requested: req, expectedTotal: nil) == .ok)
        #expect(ResponseCheck.check(Self.partial("bytes 0-0/1", length: "1"), requested: req, expectedTotal: nil) == .ok)
        #expect(Self.isInvalid(ResponseCheck.check(Self.partial("bytes 0-1/1234", length: "2"), requested: req, expectedTotal: nil)))
    }

    @Test("an invalid verdict explains itself without the raw header running long")
    func messageIsBounded() {
        let long = "bytes " + String(repeating: "9", count: 500)
        guard case .invalid(let message) = ResponseCheck.check(Self.partial(long), requested: ByteRange(start: 100), expectedTotal: nil) else {
            Issue.record("expected .invalid")
            return
        }
        #expect(!message.isEmpty)
        #expect(message.count < 200)
    }

    // MARK: If-Range

    @Test("a 206 of another version than If-Range named is invalid: the server ignored If-Range", arguments: [
        // (If-Range sent, the 206's validators, verdict is .ok)
        ("\"v1\"", [("ETag", "\"v1\"")], true),
        ("\"v1\"", [("ETag", "\"v2\"")], false),
        ("\"v1\"", [], true),                                   // no ETag in the answer: nothing to compare
        ("\"v1\"", [("ETag", "W/\"v2\"")], true),              // a weak ETag says nothing
        ("\"v1\"", [("Last-Modified", "Wed, 02 Oct 2024 10:00:00 GMT")], true),
        ("Tue, 01 Oct 2024 10:00:00 GMT", [("Last-Modified", "Tue, 01 Oct 2024 10:00:00 GMT")], true),
        ("Tue, 01 Oct 2024 10:00:00 GMT", [("Last-Modified", "Wed, 02 Oct 2024 10:00:00 GMT")], false),
        ("Tue, 01 Oct 2024 10:00:00 GMT", [("ETag", "\"v2\"")], true),
    ] as [(String, [(String, String)], Bool)])
    func ifRangeVersion(ifRange: String, validators: [(String, String)], ok: Bool) {
        let head = makeHead(206, [("Content-Range", "bytes 100-999/1000"), ("Content-Length", "900")] + validators)
        let verdict = ResponseCheck.check(head, requested: ByteRange(start: 100), expectedTotal: 1000, ifRange: ifRange)
        #expect((verdict == .ok) == ok, "\(verdict)")
        if !ok, case .invalid(let message) = verdict { #expect(message.contains("the file changed"), "\(message)") }
    }
}
