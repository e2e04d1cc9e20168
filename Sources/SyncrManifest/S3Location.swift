/// `s3://bucket/key` parsed: a bucket and a key (empty for the bucket itself), as written.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public var bucket: String
    /// The object key, or a prefix ending in `/` (a folder), or empty.
    public var key: String

    /// Creates a location.
    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Whether `url` starts with `s3://` (any case): the caller should parse it as one.
    public static func isS3URL(_ url: String) -> Bool {
        // On the bytes, and for the usual http(s) URL decided at the first: every URL of a manifest
        // is asked, several times per entry (`Download.s3`).
        var bytes = url.utf8.makeIterator()
        for expected in "s3://".utf8 {
            guard let byte = bytes.next(), byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0) == expected else { return false }
        }
        return true
    }

    /// Parses `s3://bucket/key`.
    /// - Throws: `S3URLError` saying what is wrong with it.
    public init(parsing url: String) throws(S3URLError) {
        guard Self.isS3URL(url) else { throw .notS3 }
        let rest = url.dropFirst(5)
        let bucket = rest.prefix { $0 != "/" }
        guard !bucket.isEmpty else { throw .noBucket }
        guard Self.isValidBucket(String(bucket)) else { throw .badBucket(String(bucket)) }
        let key = rest.dropFirst(bucket.count + 1)
        guard !key.contains("?"), !key.contains("#") else { throw .queryOrFragment }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw .controlCharacter
        }
        self.init(bucket: String(bucket), key: String(key))
    }

    /// The object of a URL syncr made itself from a listing (`s3://bucket/` and the key as the
    /// store gave it): any key the store holds, with the `?`, `#` and control characters that a
    /// manifest's URL may not carry. Only the bucket is checked; nil when there is none.
    public init?(listed url: String) {
        guard Self.isS3URL(url) else { return nil }
        let rest = url.dropFirst(5)
        let bucket = rest.prefix { $0 != "/" }
        guard Self.isValidBucket(String(bucket)), rest.count > bucket.count else { return nil }
        self.init(bucket: String(bucket), key: String(rest.dropFirst(bucket.count + 1)))
    }

    /// The `s3://` form.
    public var description: String { "s3://\(bucket)/\(key)" }

    /// Whether the key names a folder of objects (empty, or ending in `/`).
    public var isPrefix: Bool { key.isEmpty || key.hasSuffix("/") }

    /// Bucket names as S3 allows them (3-63 of `a-z 0-9 . -`, starting and ending with a letter
    /// or digit), and the `_` and capitals that older buckets and other stores allow.
    static func isValidBucket(_ name: String) -> Bool {
        guard (3...63).contains(name.utf8.count) else { return false }
        let allowed = name.utf8.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: ".")
                || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
        }
        let ends = [name.utf8.first!, name.utf8.last!].allSatisfy { $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "-") }
        return allowed && ends
    }
}

/// Why an `s3://` URL was refused; `description` says what to write instead.
public enum S3URLError: Error, Sendable, Equatable, CustomStringConvertible {
    case notS3
    case noBucket
    case badBucket(String)
    case queryOrFragment
    case controlCharacter

    public var description: String {
        switch self {
        case .notS3: return "expected an s3://bucket/key URL"
        case .noBucket: return "no bucket: write s3://bucket/key"
        case .badBucket(let name):
            return "\"\(name)\" is not a valid bucket name (3 to 63 letters, digits, '.', '-' or '_', starting and ending with a letter or digit)"
        case .queryOrFragment: return "an s3:// URL takes no '?' or '#'; write the key as it is, without encoding"
        case .controlCharacter: return "an object key cannot contain control characters"
        }
    }

    /// The same without the value it quotes: for a URL whose `${...}` references were
    /// expanded, where the value may be a secret.
    public var descriptionWithoutValues: String {
        guard case .badBucket = self else { return description }
        return "the bucket name is not valid (3 to 63 letters, digits, '.', '-' or '_', starting and ending with a letter or digit)"
    }
}
