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
    /// (last before first, last beyond total).
    public init?(parsing text: String) {
        let s = text.trimmed
        guard s.count > 6, s.prefix(6).lowercased() == "bytes " else { return nil }
        let rest = s.dropFirst(6).trimmingCharacters(in: " ")
        let halves = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let rangePart = String(halves[0]), totalPart = String(halves[1])
        var total: Int64?
        if totalPart == "*" {
            total = nil
        } else {
            guard let t = Self.number(totalPart) else { return nil }
            total = t
        }
        if rangePart == "*" {
            guard total != nil else { return nil }
            self.init(first: nil, last: nil, total: total)
            return
        }
        let bounds = rangePart.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let a = Self.number(String(bounds[0])), let b = Self.number(String(bounds[1])),
              a <= b else { return nil }
        if let total, b >= total { return nil }
        self.init(first: a, last: b, total: total)
    }

    /// Number of bytes in the enclosed part.
    public var length: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    private static func number(_ s: String) -> Int64? {
        guard !s.isEmpty, s.count <= 18, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(s)
    }
}
