import Foundation
import Testing
@testable import SyncrHTTP

@Suite("EntityTag parsing and comparison (RFC 9110 §8.8.3)", .timeLimit(.minutes(10)))
struct EntityTagTests {
    @Test("valid ETag values parse", arguments: [
        ("\"xyzzy\"", "xyzzy", false),
        ("W/\"xyzzy\"", "xyzzy", true),
        ("\"\"", "", false),                       // the empty opaque tag is valid
        ("W/\"\"", "", true),
        ("\"67ab43-1a2b\"", "67ab43-1a2b", false),
        ("  \"abc\"\r\n", "abc", false),           // surrounding whitespace
        ("W/\"0815\"", "0815", true),
        ("\"a/b\"", "a/b", false),
        ("\"W/abc\"", "W/abc", false),             // W/ inside the quotes is opaque data
        // Unquoted values (sent by some servers) are taken as strong tags.
        ("abc123", "abc123", false),
        ("W/abc123", "abc123", true),
        // Lower-case w/ is accepted as weak: lenient, and weak is the safe reading.
        ("w/\"abc\"", "abc", true),
    ])
    func parsesValid(_ text: String, _ opaque: String, _ weak: Bool) throws {
        let tag = try #require(EntityTag(parsing: text))
        #expect(tag.opaque == opaque)
        #expect(tag.isWeak == weak)
    }

    @Test("malformed ETag values are rejected", arguments: [
        "",
        "   ",
        "\"",                 // lone quote
        "W/\"",
        "\"abc",              // unterminated
        "abc\"",              // closing quote only
        "W/\"abc",
        "\"a\"b\"",           // quote inside the opaque part
        "\"abc\"def",
        "ab\"c",
        "W/",                 // weak marker with nothing
        "\"ab\ncd\"",         // line break inside
        "W/ \"abc\"",         // space between W/ and the quote
    ])
    func rejectsMalformed(_ text: String) {
        #expect(EntityTag(parsing: text) == nil)
    }

    @Test("headerValue puts the quotes and the weak marker back")
    func headerValueRoundTrips() throws {
        for text in ["\"xyzzy\"", "W/\"xyzzy\"", "\"\"", "W/\"\""] {
            let tag = try #require(EntityTag(parsing: text))
            #expect(tag.headerValue == text)
            #expect(tag.description == text)
            #expect(EntityTag(parsing: tag.headerValue) == tag)
        }
        #expect(EntityTag(parsing: "abc")?.headerValue == "\"abc\"")
        #expect(EntityTag(parsing: "W/abc")?.headerValue == "W/\"abc\"")
    }

    // The comparison table of RFC 9110 §8.8.3.2.
    @Test("strong and weak comparison follow the RFC 9110 table", arguments: [
        // (a, b, strong match, weak match)
        ("W/\"1\"", "W/\"1\"", false, true),
        ("W/\"1\"", "W/\"2\"", false, false),
        ("W/\"1\"", "\"1\"", false, true),
        ("\"1\"", "\"1\"", true, true),
        ("\"1\"", "\"2\"", false, false),
        ("\"1\"", "W/\"1\"", false, true),
        ("\"abc\"", "\"ABC\"", false, false),    // opaque tags are case-sensitive
    ])
    func comparison(_ a: String, _ b: String, _ strong: Bool, _ weak: Bool) throws {
        let x = try #require(EntityTag(parsing: a))
        let y = try #require(EntityTag(parsing: b))
        #expect(x.strongMatch(y) == strong)
        #expect(y.strongMatch(x) == strong)
        #expect(x.weakMatch(y) == weak)
        #expect(y.weakMatch(x) == weak)
    }

    @Test("Codable round trip keeps opaque and weakness")
    func codable() throws {
        for tag in [EntityTag(opaque: "abc", isWeak: false), EntityTag(opaque: "x-y", isWeak: true)] {
            let data = try JSONEncoder().encode(tag)
            #expect(try JSONDecoder().decode(EntityTag.self, from: data) == tag)
        }
    }
}
