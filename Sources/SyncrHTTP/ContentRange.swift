/// A parsed `Content-Range` header (RFC 9110 §14.4): `bytes 0-499/1234`, `bytes 0-499/*` or
/// `bytes */1234`.
public struct ContentRange: Sendable, Equatable {
    /// First and last byte (inclusive) of the enclosed part; nil for the unsatisfied form `*/N`.
    public var first: Int64?
    public var last: Int64?
    /// The complete length, nil when the server wrote `*`.
    public var total: Int64?

    public init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// Parses a header value; returns nil for anything malformed or self-contradictory
    /// (last before first, last beyond total). On the bytes in place: every ranged answer has
    /// one.
    public init?(parsing text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0[...]) }) else { return nil }
        self = parsed
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static func parse(_ whole: Bytes) -> ContentRange? {
        let s = HTTPWhitespace.trimmed(whole)
        let word: StaticString = "bytes "
        let unit = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard s.count > unit.count,
              zip(s.prefix(unit.count), unit).allSatisfy({ $1 == 0x20 ? $0 == 0x20 : ($0 | 0x20) == $1 })
        else { return nil }
        let rest = HTTPWhitespace.trimmed(s.dropFirst(unit.count)) { $0 == 0x20 }
        let star = UInt8(ascii: "*")
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let rangePart = rest[..<slash], totalPart = rest[(slash + 1)...]
        guard !totalPart.contains(UInt8(ascii: "/")) else { return nil }
        var total: Int64?
        if totalPart.elementsEqual(CollectionOfOne(star)) {
            total = nil
        } else {
            guard let t = number(totalPart) else { return nil }
            total = t
        }
        if rangePart.elementsEqual(CollectionOfOne(star)) {
            guard total != nil else { return nil }
            return ContentRange(first: nil, last: nil, total: total)
        }
        guard let dash = rangePart.firstIndex(of: UInt8(ascii: "-")),
              let a = number(rangePart[..<dash]), let b = number(rangePart[(dash + 1)...]),
              a <= b else { return nil }
        if let total, b >= total { return nil }
        return ContentRange(first: a, last: b, total: total)
    }

    /// Number of bytes in the enclosed part.
    public var length: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    /// Decimal digits only, at most 18 of them (so no overflow), as a number.
    private static func number(_ digits: Bytes) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int64(byte - 48)
        }
        return value
    }
}
