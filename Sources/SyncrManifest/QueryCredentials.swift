/// Query parameters that carry credentials: `?token=...`, `access_token`, `api_key`, `sig`,
/// `X-Amz-Signature`, `X-Amz-Credential`, ... Presigned and token URLs are written literally
/// into manifests, and their values must no more reach a terminal, a CI log or a report than a
/// password in the URL's user information.
public enum QueryCredentials {
    /// A parameter whose lowercased name contains one of these carries a credential. Broad on
    /// purpose: masking a harmless value costs a little information, printing a token costs a
    /// rotated key.
    public static let nameHints = ["token", "key", "sig", "secret", "pass", "auth", "credential", "session", "code"]

    /// Values at least this long are secrets wherever they appear (a server may echo one in an
    /// error page); shorter ones are masked only as the value of their parameter, since masking
    /// every "42" or "eu" in every message would hide more than it protects.
    static let minimumSecretLength = 8

    /// Whether a query parameter of this name carries a credential.
    public static func isCredential(name: some StringProtocol) -> Bool {
        let lowered = name.lowercased()
        return nameHints.contains { lowered.contains($0) }
    }

    /// The values of credential parameters in `text`, as written and percent-decoded, that are
    /// long enough to be masked wherever they appear. `${VAR}` references are left out: they
    /// name a secret, which the expansion already reports.
    public static func secrets(in text: String) -> [String] {
        guard text.utf8.contains(UInt8(ascii: "=")) else { return [] }
        var found: [String] = []
        forEachCredential(in: text) { value in
            guard value.count >= minimumSecretLength else { return }
            found.append(String(value))
            if let decoded = URLCredentials.percentDecoded(value), decoded != String(value) { found.append(decoded) }
        }
        return found
    }

    /// `?name=value` and `&name=value` with a credential's name become `name=***`, everywhere
    /// in `text`.
    public static func masked(_ text: String) -> String {
        // A byte search: every message syncr shows passes here, and most have no `=`.
        guard text.utf8.contains(UInt8(ascii: "=")) else { return text }
        var out = ""
        var copied = text.startIndex
        forEachCredential(in: text) { value in
            out += text[copied..<value.startIndex]
            out += "***"
            copied = value.endIndex
        }
        return out + text[copied...]
    }

    /// Calls `body` with the value of every `?name=value` or `&name=value` in `text` whose name
    /// is a credential's, in order; empty values, `${VAR}` references and `***` are skipped.
    private static func forEachCredential(in text: String, _ body: (Substring) -> Void) {
        var i = text.startIndex
        while let mark = text[i...].firstIndex(where: { $0 == "?" || $0 == "&" }) {
            let nameStart = text.index(after: mark)
            let nameEnd = text[nameStart...].firstIndex(where: { !isNameCharacter($0) }) ?? text.endIndex
            i = nameEnd
            guard nameEnd > nameStart, nameEnd < text.endIndex, text[nameEnd] == "=" else { continue }
            let valueStart = text.index(after: nameEnd)
            let valueEnd = text[valueStart...].firstIndex(where: isValueEnd) ?? text.endIndex
            i = valueEnd
            let value = text[valueStart..<valueEnd]
            guard isCredential(name: text[nameStart..<nameEnd]), !value.isEmpty, !value.hasPrefix("${"),
                  value != "***" else { continue }
            body(value)
        }
    }

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || "-_.~%[]".contains(c))
    }

    private static func isValueEnd(_ c: Character) -> Bool {
        c.isWhitespace || "&#\"'<>()`".contains(c)
    }
}
