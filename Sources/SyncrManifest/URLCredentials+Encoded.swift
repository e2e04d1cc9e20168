/// The user information of a URL carried percent-encoded in another one's query (a redirect's
/// `?to=https%3A%2F%2Fuser%3Apassword%40host%2Ff`, a login's `?next=`): masked in place like
/// that of a URL as written, at any depth of encoding (`%253A` two URLs down).
extension URLCredentials {
    /// `text` with the password (or lone token) of every encoded `scheme://user:password@host`
    /// replaced by `***`; the text itself when there is none.
    static func maskedEncodedUserInformation(_ text: String) -> String {
        guard let (bytes, ranges) = encodedUserInformation(in: text), !ranges.isEmpty else { return text }
        return Masking.masked(bytes, ranges: ranges)
    }

    /// The passwords of encoded URLs in `text`, as written and at each depth of decoding: a
    /// server along the way may echo any of them.
    static func encodedSecrets(in text: String) -> [String] {
        guard let (bytes, ranges) = encodedUserInformation(in: text) else { return [] }
        var found: [String] = []
        for range in ranges {
            var written = String(decoding: bytes[range], as: UTF8.self)
            found.append(written)
            while written.containsByte(UInt8(ascii: "%")), let decoded = percentDecoded(Substring(written)), decoded != written {
                found.append(decoded)
                written = decoded
            }
        }
        return found
    }

    /// `text`'s bytes and the ranges of them that hold the password (after an encoded `:`), or
    /// the whole user information when it has no `:`, of each encoded `scheme://...@host`; nil
    /// for text without a `%`, which is most (every URL of a manifest passes here), uncopied.
    private static func encodedUserInformation(in text: String) -> (bytes: [UInt8], ranges: [Range<Int>])? {
        guard text.containsByte(UInt8(ascii: "%")) else { return nil }
        let bytes = Array(text.utf8)
        return (bytes, bytes.withUnsafeBufferPointer(userInformationOffsets))
    }

    private static func userInformationOffsets(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var i = 0
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "%"), let authority = encodedSchemeEnd(bytes, at: i) else {
                i += 1
                continue
            }
            let (end, at, colon) = scanAuthority(bytes, from: authority.start, depth: authority.depth)
            if let at {
                let start = colon ?? authority.start
                if start < at { found.append(start..<at) }
            }
            i = max(end, i + 1)
        }
        return found
    }

    /// Where the authority starts after an encoded `://` at `i` (`%3A%2F%2F`, each `%` written
    /// as `%25` once per further level), and its depth.
    private static func encodedSchemeEnd(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (start: Int, depth: Int)? {
        guard let colon = QueryCredentials.percentEncoded(bytes, at: i), colon.byte == UInt8(ascii: ":"),
              let slash = QueryCredentials.percentEncoded(bytes, at: colon.end), slash.byte == UInt8(ascii: "/"),
              slash.depth == colon.depth,
              let second = QueryCredentials.percentEncoded(bytes, at: slash.end), second.byte == UInt8(ascii: "/"),
              second.depth == colon.depth else { return nil }
        return (second.end, colon.depth)
    }

    /// Scans an encoded authority to its end (an encoded `/`, `?` or `#` at its depth or a
    /// shallower one, or a raw delimiter): where it ends, where its last `@` starts, and where the
    /// password after the user's `:` starts (both at its depth).
    private static func scanAuthority(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int,
                                      depth: Int) -> (end: Int, at: Int?, password: Int?) {
        var j = start
        var at: Int?, password: Int?
        while j < bytes.count {
            let b = bytes[j]
            if b == UInt8(ascii: "%"), let c = QueryCredentials.percentEncoded(bytes, at: j), c.depth <= depth {
                if "/?#".utf8.contains(c.byte) { break }
                if c.depth == depth, c.byte == UInt8(ascii: "@") { at = j }
                if c.depth == depth, c.byte == UInt8(ascii: ":"), at == nil, password == nil { password = c.end }
                j = c.end
                continue
            }
            if "/?#&=\"'<> \t\r\n".utf8.contains(b) { break }
            j += 1
        }
        // A `:` after the last `@` is the port's, not the user's.
        if let p = password, let a = at, p > a { password = nil }
        return (j, at, password)
    }
}
