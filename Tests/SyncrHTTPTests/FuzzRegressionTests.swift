import Testing
@testable import SyncrHTTP

/// Inputs found by the fuzz target Fuzz/Sources/FuzzHTTP (see scripts/fuzz), kept so that the
/// bugs they found stay fixed.
@Suite("HTTP fuzz regressions", .timeLimit(.minutes(10)))
struct HTTPFuzzRegressionTests {
    /// FuzzHTTP crash-b6d2b400…: `Retry-After: 120` with the value padded by a bare line feed
    /// (`"\n 120\r\n\n"`) was not trimmed: a Character set made from `" \t\r\n"` holds the one
    /// Character `"\r\n"`, not `"\r"` or `"\n"`, so a lone LF or CR stayed on the value.
    @Test("trimming removes a lone LF or CR, not only CRLF", arguments: [
        "\n 120\r\n\n", "120\n", "\n120", "120\r", "\r120", " \t120\r\n", "\n\r120\r\n\r",
    ])
    func loneLineBreaksAreTrimmed(_ value: String) {
        #expect(value.trimmed == "120")
        let head = makeHead(429, [("Retry-After", value), ("Content-Length", value)])
        #expect(head.value("Retry-After").flatMap(RetryAfter.init(parsing:)) == .seconds(120))
        #expect(head.contentLength == 120)
    }

    @Test("a header value from a bare-LF server parses like one from a CRLF server")
    func bareLineFeedValues() {
        let head = makeHead(206, [("Content-Range", "bytes 0-9/100\n"), ("ETag", "\"abc\"\n"),
                                  ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT\n"),
                                  ("Content-Encoding", "identity\n")])
        #expect(head.contentRange == ContentRange(first: 0, last: 9, total: 100))
        #expect(head.etag == EntityTag(opaque: "abc", isWeak: false))
        #expect(head.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(head.contentEncoding == nil)
    }

    @Test("trimming keeps what is inside and handles blank-only text")
    func trimmingEdges() {
        #expect("\r\n".trimmed == "")
        #expect("\n\n".trimmed == "")
        #expect("a \n b".trimmed == "a \n b")
        #expect("é\n".trimmed == "é")
    }
}

@Suite("EntityTag fuzz regressions", .timeLimit(.minutes(10)))
struct EntityTagFuzzRegressionTests {
    /// FuzzHTTP crash-13a71185…: an opaque tag starting with a combining mark (U+07ED) did not
    /// parse back from its own header value: `"` followed by the mark is one Character, so the
    /// opening quote was not seen and the closing one made the value invalid.
    @Test func aTagStartingWithACombiningMarkRoundTrips() throws {
        let text = String(decoding: [0xDF, 0xAD, 0xCF, 0xEF, 0xFF, 0xDF, 0xAD, 0xCF, 0xEF, 0xFF, 0x89, 0x7E] as [UInt8],
                          as: UTF8.self)
        let tag = try #require(EntityTag(parsing: text))
        #expect(EntityTag(parsing: tag.headerValue) == tag)
        #expect(EntityTag(parsing: "\"\u{07ED}abc\"") == EntityTag(opaque: "\u{07ED}abc", isWeak: false))
        #expect(EntityTag(parsing: "W/\"\u{0301}x\"") == EntityTag(opaque: "\u{0301}x", isWeak: true))
    }

    @Test func quotesAndLineBreaksInsideAreStillRefused() {
        #expect(EntityTag(parsing: "\"a\"b\"") == nil)
        #expect(EntityTag(parsing: "\"a\u{2028}b\"") == nil)
        #expect(EntityTag(parsing: "\"a\rb\"") == nil)
        // Every newline scalar, as the parser meets it in UTF-8: NEL is C2 85, PARAGRAPH
        // SEPARATOR E2 80 A9, VT and FF one byte each.
        for newline in ["\u{85}", "\u{2029}", "\u{0B}", "\u{0C}", "\n"] {
            #expect(EntityTag(parsing: "\"a\(newline)b\"") == nil, "\(newline.unicodeScalars.first!.value)")
            #expect(EntityTag(parsing: "a\(newline)b") == nil)
        }
        // Scalars that share those sequences' lead bytes are opaque data: U+0084 (C2 84),
        // U+00E9 (C3 A9), U+2027 (E2 80 A7) and U+20AC (E2 82 AC).
        for other in ["\u{84}", "\u{E9}", "\u{2027}", "\u{20AC}"] {
            #expect(EntityTag(parsing: "\"a\(other)\"") == EntityTag(opaque: "a" + other, isWeak: false))
        }
        #expect(EntityTag(parsing: "W/") == nil)
        #expect(EntityTag(parsing: "\"\"") == EntityTag(opaque: "", isWeak: false))
    }
}
