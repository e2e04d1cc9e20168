import Testing
@testable import SyncrCore

/// A cache key is read from a string's bytes in place where they lie in one piece, and from
/// any other collection of bytes the slow way: both read the same.
@Suite(.timeLimit(.minutes(5)))
struct CacheKeyTests {
    static let hex = "0123456789abcdef00ff7e1a2b3c4d5e"

    @Test func everyFormOfTheDigitsReadsTheSameKey() throws {
        let key = try #require(CacheKey(hex: Self.hex.utf8))
        #expect(key.hex == Self.hex)
        let padded = "x" + Self.hex + "y"
        let inner = padded.dropFirst().dropLast()
        #expect(CacheKey(hex: inner.utf8) == key)
        #expect(CacheKey(hex: Array(Self.hex.utf8)) == key)
        #expect(CacheKey(hex: Array(Self.hex.utf8)[...]) == key)
        // Not contiguous: read through its iterator.
        #expect(CacheKey(hex: Self.hex.utf8.lazy.map { $0 }) == key)
    }

    @Test(arguments: ["", "0123456789abcdef00ff7e1a2b3c4d5", "0123456789abcdef00ff7e1a2b3c4d5e0",
                      "0123456789ABCDEF00ff7e1a2b3c4d5e", "0123456789abcdeg00ff7e1a2b3c4d5e"])
    func notAKey(text: String) {
        #expect(CacheKey(hex: text.utf8) == nil)
        #expect(CacheKey(hex: text.utf8.lazy.map { $0 }) == nil)
    }
}
