/// The user information of URLs written in a manifest (`https://user:password@host/`), which
/// is a secret like a `${VAR}` expansion: found here so that output can mask it.
public enum URLCredentials {
    /// The password of every `scheme://user:password@host` in `text` (also `scheme://token@host`,
    /// whose lone part is a credential), as written and percent-decoded.
    public static func secrets(in text: String) -> [String] {
        // A byte search first: without an `@` there is no user information, and the substring
        // search below costs far more (this runs for every URL of a manifest).
        guard text.containsByte(UInt8(ascii: "@")) else { return encodedSecrets(in: text) }
        var found: [String] = []
        var rest = Substring(text)
        while let schemeEnd = rest.firstRange(of: "://") {
            rest = rest[schemeEnd.upperBound...]
            let end = rest.firstIndex(where: { "/?#\"'<> ".contains($0) || $0.isWhitespace }) ?? rest.endIndex
            let authority = rest[..<end]
            if let at = authority.lastIndex(of: "@") {
                let info = authority[..<at]
                let secret = info.firstIndex(of: ":").map { info[info.index(after: $0)...] } ?? info
                if !secret.isEmpty {
                    found.append(String(secret))
                    if let decoded = percentDecoded(secret), decoded != String(secret) { found.append(decoded) }
                    // What curl sends for it, `Authorization: Basic base64(user:password)`: a server
                    // that echoes request headers in an error page must not print it either.
                    if let decoded = percentDecoded(info) { found.append(base64(Array(decoded.utf8))) }
                }
            }
            rest = rest[end...]
        }
        return found + encodedSecrets(in: text)
    }

    /// `scheme://user:password@host` → `scheme://user:***@host`, `scheme://token@host` →
    /// `scheme://***@host`, and `?token=value` → `?token=***` (see `QueryCredentials`),
    /// everywhere in `text`.
    public static func masked(_ text: String) -> String {
        QueryCredentials.masked(maskedEncodedUserInformation(maskedUserInformation(text)))
    }

    private static func maskedUserInformation(_ text: String) -> String {
        // The byte search for `@` first: it rules out most messages at once, and a substring
        // search costs far more.
        guard text.containsByte(UInt8(ascii: "@")), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let schemeEnd = rest.firstRange(of: "://") {
            result += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let end = rest.firstIndex(where: { "/?#\"'<> ".contains($0) || $0.isWhitespace }) ?? rest.endIndex
            let authority = rest[..<end]
            if let at = authority.lastIndex(of: "@") {
                if let colon = authority[..<at].firstIndex(of: ":") {
                    result += authority[..<colon] + ":***" + authority[at...]
                } else {
                    result += "***" + authority[at...]
                }
            } else {
                result += authority
            }
            rest = rest[end...]
        }
        return result + rest
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i < utf8.endIndex {
            let b = utf8[i]
            if b == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h < utf8.endIndex, utf8.index(after: h) < utf8.endIndex,
                      let v = UInt8(String(decoding: utf8[h...utf8.index(after: h)], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(v)
                i = utf8.index(h, offsetBy: 2)
            } else {
                bytes.append(b)
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// RFC 4648 base64 with padding, as in HTTP Basic authentication.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = Int(bytes[i]), b1 = n > 1 ? Int(bytes[i + 1]) : 0, b2 = n > 2 ? Int(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[v >> 18 & 63])
            out.append(alphabet[v >> 12 & 63])
            out.append(n > 1 ? alphabet[v >> 6 & 63] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[v & 63] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
