import Testing
@testable import SyncrHTTP

@Suite("RemoteResource from a response head", .timeLimit(.minutes(10)))
struct RemoteResourceTests {
    static let lm = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test("a HEAD 200 gives size, validators and range support")
    func fromHead() {
        let h = makeHead(200, [("Content-Length", "1234"), ("ETag", "\"v1\""), ("Last-Modified", Self.lm),
                               ("Accept-Ranges", "bytes")], url: "https://cdn.example.com/f?sig=secret")
        let r = RemoteResource(head: h, method: "HEAD")
        #expect(r.size == 1234)
        #expect(r.etag == EntityTag(opaque: "v1", isWeak: false))
        #expect(r.lastModified == Self.lm)
        #expect(r.acceptsRanges)
        #expect(r.finalURL == "https://cdn.example.com/f?sig=secret")
        #expect(r.method == "HEAD")
    }

    @Test("a 200 without Accept-Ranges, or with none, does not promise ranges")
    func noRanges() {
        #expect(!RemoteResource(head: makeHead(200, [("Content-Length", "1")]), method: "HEAD").acceptsRanges)
        #expect(!RemoteResource(head: makeHead(200, [("Accept-Ranges", "none")]), method: "HEAD").acceptsRanges)
        #expect(RemoteResource(head: makeHead(200), method: "HEAD").size == nil)
    }

    @Test("a 206 to bytes=0-0 gives the size from Content-Range, and proves ranges work")
    func fromProbeGet() {
        let h = makeHead(206, [("Content-Range", "bytes 0-0/5000"), ("Content-Length", "1")])
        let r = RemoteResource(head: h, method: "GET Range: bytes=0-0")
        #expect(r.size == 5000)
        #expect(r.acceptsRanges)
        #expect(r.method == "GET Range: bytes=0-0")
    }

    @Test("a 206 with an unknown total has no size (its Content-Length is the part's)")
    func probeUnknownTotal() {
        let h = makeHead(206, [("Content-Range", "bytes 0-0/*"), ("Content-Length", "1")])
        #expect(RemoteResource(head: h, method: "GET").size == nil)
    }

    @Test("ifRangeValidator prefers a strong ETag", arguments: [
        // (ETag, Last-Modified, expected)
        ("\"v1\"", lm, "\"v1\""),
        ("\"v1\"", nil, "\"v1\""),
        ("v1", nil, "\"v1\""),            // unquoted tag is sent quoted
        ("\"\"", nil, "\"\""),
        (nil, lm, lm),
        (nil, nil, nil),
        ("W/\"v1\"", nil, nil),           // a weak tag is never sent in If-Range
    ] as [(String?, String?, String?)])
    func ifRangeValidator(_ etag: String?, _ lastModified: String?, _ expected: String?) {
        var fields: [(String, String)] = [("Content-Length", "10")]
        if let etag { fields.append(("ETag", etag)) }
        if let lastModified { fields.append(("Last-Modified", lastModified)) }
        #expect(RemoteResource(head: makeHead(200, fields), method: "HEAD").ifRangeValidator == expected)
    }

    // Regression (fixed; Probe.swift, RemoteResource.ifRangeValidator): with a weak ETag it falls back to
    // Last-Modified. RFC 9110 §13.1.5: "A client MUST NOT generate an If-Range header field
    // containing an HTTP-date unless the client has no entity tag for the corresponding
    // representation and the date is a strong validator". A weak ETag is an entity tag, so
    // there is no usable If-Range validator and the result must be nil.
    @Test("a weak ETag rules out Last-Modified as If-Range validator")
    func weakETagForbidsDate() {
        let h = makeHead(200, [("ETag", "W/\"v1\""), ("Last-Modified", Self.lm)])
        #expect(RemoteResource(head: h, method: "HEAD").ifRangeValidator == nil)
    }
}
