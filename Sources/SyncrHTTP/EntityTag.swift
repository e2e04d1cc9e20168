/// An HTTP entity tag (RFC 9110 §8.8.3): `"xyz"` (strong) or `W/"xyz"` (weak).
public struct EntityTag: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The opaque tag without quotes.
    public var opaque: String
    /// Whether the tag is weak (`W/"xyz"`): it then names the version only loosely, and is
    /// never sent in `If-Range`.
    public var isWeak: Bool

    /// Creates a tag from its parts.
    public init(opaque: String, isWeak: Bool) {
        self.opaque = opaque
        self.isWeak = isWeak
    }

    /// Parses an `ETag` header value. Unquoted values (sent by some servers) are accepted as
    /// strong tags, since that is how they are meant.
    ///
    /// Works on the UTF-8 bytes in place (every answer has an ETag), never on Characters: a
    /// combining mark right after the opening quote (etagc allows any obs-text) would join the
    /// quote into one Character and hide it. The quote and the slash are ASCII, so no byte of a
    /// longer sequence is taken for one.
    public init?(parsing text: String) {
        var text = text
        guard let parsed = text.withUTF8(Self.parse) else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> EntityTag? {
        let quote = UInt8(ascii: "\"")
        var start = 0, end = bytes.count
        while start < end, HTTPWhitespace.contains(bytes[start]) { start += 1 }
        while end > start, HTTPWhitespace.contains(bytes[end - 1]) { end -= 1 }
        var weak = false
        // `W/` or `w/`: 0x20 folds the one letter's case only.
        if end - start >= 2, bytes[start] | 0x20 == UInt8(ascii: "w"), bytes[start + 1] == UInt8(ascii: "/") {
            weak = true
            start += 2
        }
        if start < end, bytes[start] == quote {
            guard end - start >= 2, bytes[end - 1] == quote else { return nil }
            start += 1
            end -= 1
        }
        let opaque = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard !opaque.contains(quote), !containsNewline(opaque) else { return nil }
        if opaque.isEmpty && !bytes.contains(quote) { return nil }
        return EntityTag(opaque: String(decoding: opaque, as: UTF8.self), isWeak: weak)
    }

    /// Whether the bytes hold one of Character.isNewline's scalars: LF, VT, FF, CR (one byte
    /// each), NEL (C2 85), LINE and PARAGRAPH SEPARATOR (E2 80 A8, E2 80 A9). UTF-8 is
    /// self-synchronising: these sequences start no other scalar's bytes.
    private static func containsNewline(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for i in bytes.indices {
            switch bytes[i] {
            case 0x0A...0x0D: return true
            case 0xC2 where i + 1 < bytes.count && bytes[i + 1] == 0x85: return true
            case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80
                && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
                return true
            default: continue
            }
        }
        return false
    }

    /// The header form, with quotes.
    public var headerValue: String { (isWeak ? "W/" : "") + "\"" + opaque + "\"" }

    public var description: String { headerValue }

    /// Strong comparison: both strong and identical (required for ranges, RFC 9110 §13.1.5).
    public func strongMatch(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }

    /// Weak comparison: identical opaque tags, weak or not.
    public func weakMatch(_ other: EntityTag) -> Bool { opaque == other.opaque }
}
