/// The status line and headers of the final response of a transfer (after redirects).
public struct HTTPResponseHead: Sendable, Equatable {
    public var status: Int
    /// Header fields in arrival order, names as sent.
    public var fields: [HeaderField]
    /// The URL of the final response after redirects (may hold secrets; never print it).
    public var effectiveURL: String

    public struct HeaderField: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, fields: [HeaderField], effectiveURL: String) {
        self.status = status
        self.fields = fields
        self.effectiveURL = effectiveURL
    }

    /// The first value of a header, matched case-insensitively.
    public func value(_ name: String) -> String? {
        fields.first { Self.sameASCII($0.name, name) }?.value
    }

    /// Whether two header names (ASCII tokens) are equal but for the case of letters. Compared
    /// byte by byte: every lookup of every answer compares every field, and lowercasing both
    /// made two strings each time.
    static func sameASCII<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        // In place where both lie in one piece (native strings do): a `zip` of the two views
        // cost 11,000 instructions per answer of a small download.
        let inPlace = x.withContiguousStorageIfAvailable { p in
            y.withContiguousStorageIfAvailable { q in sameASCII(bytes: p, q) }
        }
        return (inPlace ?? nil) ?? sameASCII(bytes: Array(x), Array(y))
    }

    private static func sameASCII<P: Collection<UInt8>, Q: Collection<UInt8>>(bytes x: P, _ y: Q) -> Bool {
        x.count == y.count && zip(x, y).allSatisfy { p, q in
            if p == q { return true }
            let lp = p | 0x20
            return lp == q | 0x20 && lp >= UInt8(ascii: "a") && lp <= UInt8(ascii: "z")
        }
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `Content-Length`, when present and a valid non-negative integer below 10^18 (as
    /// `ContentRange` reads its sizes): a larger one is no size a file has, and taken as no
    /// size at all, so that arithmetic on sizes from servers stays within `Int64`.
    public var contentLength: Int64? {
        guard let v = value("Content-Length"), let n = Int64(v.trimmed), n >= 0, n < 1_000_000_000_000_000_000
        else { return nil }
        return n
    }

    /// `Content-Range` of a 206 or 416 answer, parsed.
    public var contentRange: ContentRange? {
        value("Content-Range").flatMap(ContentRange.init(parsing:))
    }

    public var etag: EntityTag? { value("ETag").flatMap(EntityTag.init(parsing:)) }

    public var lastModified: String? { value("Last-Modified")?.trimmed.nonEmpty }

    /// Whether the server says it serves byte ranges (`Accept-Ranges: bytes`, among other
    /// units of a list). On the bytes in place: every answer of every entry is asked.
    public var acceptsByteRanges: Bool {
        guard var v = value("Accept-Ranges") else { return false }
        let word: StaticString = "bytes"
        let unit = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        return v.withUTF8 { bytes in
            var start = 0
            while start <= bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
                let item = HTTPWhitespace.trimmed(bytes[start..<end]) { $0 == 0x20 || $0 == 0x09 }
                if Self.sameASCII(bytes: item, unit) { return true }
                start = end + 1
            }
            return false
        }
    }

    /// `Content-Encoding` other than identity means the bytes are not the resource's bytes.
    public var contentEncoding: String? {
        guard let v = value("Content-Encoding")?.trimmed.lowercased(), !v.isEmpty, v != "identity" else { return nil }
        return v
    }

    /// The size of the whole resource this answer speaks of: the total of a `Content-Range`, or
    /// the `Content-Length` of a 200.
    public var resourceSize: Int64? {
        if status == 206 || status == 416, let total = contentRange?.total { return total }
        if status == 200 { return contentLength }
        return nil
    }
}

extension String {
    /// Without the spaces, tabs, CRs and LFs at either end. Byte by byte: they are ASCII, so
    /// no byte of a longer UTF-8 sequence is one, and every header of every answer passes here.
    var trimmed: String {
        let kept = HTTPWhitespace.trimmed(utf8)
        return kept.startIndex == utf8.startIndex && kept.endIndex == utf8.endIndex ? self : String(Substring(kept))
    }
    var nonEmpty: String? { isEmpty ? nil : self }

    /// Removes the Unicode scalars in `set` from both ends. Scalars, not Characters: `"\r\n"`
    /// is one Character, so a Character set built from `" \t\r\n"` would hold neither a lone
    /// `"\r"` nor a lone `"\n"` (a header line ending in a bare LF kept its line feed).
    func trimmingCharacters(in set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        var s = Substring(self).unicodeScalars
        while let f = s.first, scalars.contains(f) { s.removeFirst() }
        while let l = s.last, scalars.contains(l) { s.removeLast() }
        return String(s)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}

/// The bytes header syntax trims: space, tab, CR and LF.
enum HTTPWhitespace {
    static func contains(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// The text of `bytes` without whitespace at either end.
    static func trimmedText(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: trimmed(bytes), as: UTF8.self)
    }

    /// `bytes` without the bytes `drop` matches (whitespace, unless told) at either end: the
    /// one trim every header parser uses, on the bytes in place.
    static func trimmed<Bytes: BidirectionalCollection<UInt8>>(
        _ bytes: Bytes, dropping drop: (UInt8) -> Bool = contains
    ) -> Bytes.SubSequence {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, drop(bytes[start]) { start = bytes.index(after: start) }
        while end > start, drop(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return bytes[start..<end]
    }
}
