/// A cache key (32 lowercase hex digits, `Cache.key(for:)`) as two words: a set or dictionary of
/// 20,000 costs 0.6 MB, not the 3 MB of as many strings.
struct CacheKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// The key spelled by `hex`, or nil when it is not 32 lowercase hex digits.
    init?<S: Collection>(hex: S) where S.Element == UInt8 {
        // A string's bytes are read in place where they lie in one piece (they almost always
        // do): walking a `String.UTF8View` with an iterator cost 150 instructions a digit, and
        // a run looks keys up several times per entry.
        guard let words = hex.withContiguousStorageIfAvailable(Self.words) ?? Self.words(Array(hex)[...]) else {
            return nil
        }
        (high, low) = words
    }

    /// The two words spelled by 32 lowercase hex digits, or nil.
    private static func words<C: Collection>(_ hex: C) -> (UInt64, UInt64)? where C.Element == UInt8 {
        guard hex.count == 32 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var i = 0
        for c in hex {
            guard let v = digit(c) else { return nil }
            if i < 16 { high = high << 4 | UInt64(v) } else { low = low << 4 | UInt64(v) }
            i += 1
        }
        return (high, low)
    }

    /// The value of a lowercase hex digit, or nil.
    static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The key's 32 hex digits, as `Cache.key(for:)` spells it.
    var hex: String {
        String(unsafeUninitializedCapacity: 32) { out in
            let digits: StaticString = "0123456789abcdef"
            for i in 0..<32 {
                let word = i < 16 ? high : low
                out[i] = digits.utf8Start[Int(word >> UInt64(60 - 4 * (i % 16)) & 0xF)]
            }
            return 32
        }
    }
}
