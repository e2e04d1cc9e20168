/// An HTTP entity tag (RFC 9110 §8.8.3): `"xyz"` (strong) or `W/"xyz"` (weak).
public struct EntityTag: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The opaque tag without quotes.
    public var opaque: String
    public var isWeak: Bool

    public init(opaque: String, isWeak: Bool) {
        self.opaque = opaque
        self.isWeak = isWeak
    }

    /// Parses an `ETag` header value. Unquoted values (sent by some servers) are accepted as
    /// strong tags, since that is how they are meant.
    ///
    /// Works on Unicode scalars, not Characters: a combining mark right after the opening quote
    /// (etagc allows any obs-text) would join the quote into one Character and hide it.
    public init?(parsing text: String) {
        let quote: Unicode.Scalar = "\""
        var s = Substring(text.trimmed).unicodeScalars
        var weak = false
        if s.starts(with: ["W", "/"] as [Unicode.Scalar]) || s.starts(with: ["w", "/"] as [Unicode.Scalar]) {
            weak = true
            s = s.dropFirst(2)
        }
        if s.first == quote {
            guard s.count >= 2, s.last == quote else { return nil }
            s = s.dropFirst().dropLast()
        }
        guard !s.contains(where: { $0 == quote || Self.isNewline($0.value) }) else { return nil }
        if s.isEmpty && !text.unicodeScalars.contains(quote) { return nil }
        self.init(opaque: String(Substring(s)), isWeak: weak)
    }

    /// Character.isNewline's scalars: LF, VT, FF, CR, NEL, LINE and PARAGRAPH SEPARATOR. (A
    /// switch: a set literal here was built, and hashed into, for every answer's ETag.)
    private static func isNewline(_ value: UInt32) -> Bool {
        switch value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
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
