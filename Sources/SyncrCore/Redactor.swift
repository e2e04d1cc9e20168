import Foundation

/// Masks secrets in text before it is shown anywhere.
///
/// The manifest's `${ENV}` expansions are secrets; so is the password of a URL with
/// credentials. Every string that leaves the library for output passes through `scrub`.
public struct Redactor: Sendable {
    /// Longest first, so that a secret containing another is masked whole.
    public let secrets: [String]

    public init(secrets: [String]) {
        // Very short values (a "1" from ${RETRY:-1}) would mask half of every message; values
        // under 3 characters are not treated as secrets worth masking.
        self.secrets = Array(Set(secrets.filter { $0.count >= 3 })).sorted { $0.count > $1.count }
    }

    public func scrub(_ text: String) -> String {
        var out = text
        for secret in secrets where out.contains(secret) {
            out = out.replacingAll(secret, with: "***")
        }
        return Self.maskURLCredentials(out)
    }

    /// `scheme://user:password@host` → `scheme://user:***@host`.
    static func maskURLCredentials(_ text: String) -> String {
        guard text.contains("://"), text.contains("@") else { return text }
        var result = ""
        var rest = Substring(text)
        while let schemeEnd = rest.range(of: "://") {
            result += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == " " || $0 == "\"" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                result += authority[..<colon] + ":***" + authority[at...]
            } else {
                result += authority
            }
            rest = rest[authorityEnd...]
        }
        return result + rest
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let r = rest.range(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
