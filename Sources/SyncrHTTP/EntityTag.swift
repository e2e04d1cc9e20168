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
    public init?(parsing text: String) {
        var s = Substring(text.trimmed)
        var weak = false
        if s.hasPrefix("W/") || s.hasPrefix("w/") {
            weak = true
            s = s.dropFirst(2)
        }
        if s.hasPrefix("\"") {
            guard s.count >= 2, s.hasSuffix("\"") else { return nil }
            s = s.dropFirst().dropLast()
        }
        guard !s.contains("\""), !s.contains(where: { $0.isNewline }) else { return nil }
        if s.isEmpty && !text.contains("\"") { return nil }
        self.init(opaque: String(s), isWeak: weak)
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
