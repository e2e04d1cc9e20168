import Testing
@testable import SyncrHTTP

@Suite("ContentRange parsing (RFC 9110 §14.4)", .timeLimit(.minutes(10)))
struct ContentRangeTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        let text: String
        let first: Int64?
        let last: Int64?
        let total: Int64?
        var testDescription: String { "\"\(text)\"" }
    }

    @Test("valid Content-Range values parse to their parts", arguments: [
        Valid(text: "bytes 0-499/1234", first: 0, last: 499, total: 1234),
        Valid(text: "bytes 500-999/*", first: 500, last: 999, total: nil),
        Valid(text: "bytes */1234", first: nil, last: nil, total: 1234),
        Valid(text: "bytes 0-0/1", first: 0, last: 0, total: 1),
        Valid(text: "bytes 1233-1233/1234", first: 1233, last: 1233, total: 1234),
        Valid(text: "bytes */0", first: nil, last: nil, total: 0),
        // The range unit is case-insensitive (RFC 9110 §14.1).
        Valid(text: "Bytes 0-499/1234", first: 0, last: 499, total: 1234),
        Valid(text: "BYTES 0-499/1234", first: 0, last: 499, total: 1234),
        // Surrounding whitespace (as curl hands it over) and extra spaces after the unit.
        Valid(text: "  bytes 0-499/1234\r\n", first: 0, last: 499, total: 1234),
        Valid(text: "bytes   0-499/1234", first: 0, last: 499, total: 1234),
        // Leading zeros are still digits.
        Valid(text: "bytes 0100-0199/01000", first: 100, last: 199, total: 1000),
        // Large but representable (18 digits).
        Valid(text: "bytes 0-999999999999999998/999999999999999999",
              first: 0, last: 999_999_999_999_999_998, total: 999_999_999_999_999_999),
    ])
    func parsesValid(_ c: Valid) throws {
        let cr = try #require(ContentRange(parsing: c.text))
        #expect(cr.first == c.first)
        #expect(cr.last == c.last)
        #expect(cr.total == c.total)
    }

    @Test("invalid or self-contradictory Content-Range values are rejected", arguments: [
        "",
        " ",
        "bytes",
        "bytes ",
        "bytes */*",                // unsatisfied form needs a complete length
        "bytes 500-499/1234",       // last before first
        "bytes 0-1234/1234",        // last == total
        "bytes 0-2000/1234",        // last beyond total
        "bytes 0-0/0",              // nothing fits in an empty resource
        "bytes -1-499/1234",        // negative
        "bytes 0--499/1234",
        "bytes 0-499/-1234",
        "bytes +0-499/1234",
        "bytes 0-499/+1234",
        "bytes a-499/1234",         // non-digits
        "bytes 0-4x9/1234",
        "bytes 0-499/12x4",
        "bytes 0x10-0x20/1234",
        "bytes 0-499",              // missing total
        "bytes 0-/1234",            // missing last
        "bytes -499/1234",          // missing first
        "bytes 0499/1234",          // missing dash
        "bytes /1234",
        "bytes 0-499/",
        "bytes 0-499/1234/5678",
        "bytes 0-499 /1234",        // whitespace inside is not allowed
        "bytes 0 - 499/1234",
        "bytes=0-499/1234",         // Range syntax, not Content-Range
        "0-499/1234",               // no unit
        "items 0-499/1234",         // other unit
        "bytes0-499/1234",
        "bytes 0-499/1234, 500-999/1234",
        "bytes 0-1/99999999999999999999",               // total overflows Int64
        "bytes 0-9223372036854775807/*",                // 19 digits: refused rather than trusted
        "bytes 99999999999999999999-99999999999999999999/*",
        "bytes ０-４９９/1234",      // non-ASCII digits
        "bytes\u{0}0-499/1234",     // the unit must be followed by a space, not a byte that looks like one
        "bytés 0-499/1234",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(ContentRange(parsing: text) == nil)
    }

    @Test("length is last - first + 1", arguments: [
        ("bytes 0-499/1234", Int64(500)),
        ("bytes 500-999/*", Int64(500)),
        ("bytes 7-7/8", Int64(1)),
        ("bytes 0-1233/1234", Int64(1234)),
    ])
    func length(_ text: String, _ expected: Int64) throws {
        let cr = try #require(ContentRange(parsing: text))
        #expect(cr.length == expected)
    }

    @Test("the unsatisfied form */N has no length")
    func unsatisfiedHasNoLength() throws {
        let cr = try #require(ContentRange(parsing: "bytes */1234"))
        #expect(cr.length == nil)
        #expect(cr == ContentRange(first: nil, last: nil, total: 1234))
    }

    @Test("memberwise init and parsing agree")
    func equatable() {
        #expect(ContentRange(parsing: "bytes 1-2/3") == ContentRange(first: 1, last: 2, total: 3))
        #expect(ContentRange(parsing: "bytes 1-2/*") == ContentRange(first: 1, last: 2, total: nil))
        #expect(ContentRange(parsing: "bytes 1-2/3") != ContentRange(first: 1, last: 2, total: nil))
    }
}

@Suite("ByteRange.headerValue (RFC 9110 §14.2)", .timeLimit(.minutes(10)))
struct ByteRangeTests {
    @Test("open and closed ranges render as Range header values", arguments: [
        (ByteRange(start: 0), "bytes=0-"),
        (ByteRange(start: 100), "bytes=100-"),
        (ByteRange(start: 0, end: 0), "bytes=0-0"),
        (ByteRange(start: 0, end: 99), "bytes=0-99"),
        (ByteRange(start: 500, end: 999), "bytes=500-999"),
        (ByteRange(start: 9_000_000_000, end: nil), "bytes=9000000000-"),
    ])
    func headerValue(_ range: ByteRange, _ expected: String) {
        #expect(range.headerValue == expected)
        #expect(range.description == expected)
    }
}
