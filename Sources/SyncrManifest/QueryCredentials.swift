/// Query parameters that carry credentials: `?token=...`, `access_token`, `api_key`, `sig`,
/// `X-Amz-Signature`, `X-Amz-Credential`, ... Presigned and token URLs are written literally
/// into manifests, and their values must no more reach a terminal, a CI log or a report than a
/// password in the URL's user information.
public enum QueryCredentials {
    /// A parameter whose lowercased name contains one of these carries a credential. Broad on
    /// purpose: masking a harmless value costs a little information, printing a token costs a
    /// rotated key.
    public static let nameHints = ["token", "key", "sig", "secret", "pass", "auth", "credential", "session", "code",
                                   "jwt", "pwd", "ticket", "otp", "hmac", "bearer", "assertion"]

    /// Names too short to search for inside others (`pw` is in `upward`), which carry a
    /// credential when they are the whole name: `?pw=` (meeting and appliance links), `?sid=`.
    public static let shortNames = ["pw", "sid"]

    /// Values at least this long are secrets wherever they appear (a server may echo one in an
    /// error page); shorter ones are masked only as the value of their parameter, since masking
    /// every "42" or "eu" in every message would hide more than it protects.
    static let minimumSecretLength = 8

    /// Whether a query parameter of this name carries a credential.
    public static func isCredential(name: some StringProtocol) -> Bool {
        // On bytes: every message and URL syncr shows passes here, and `lowercased()` with a
        // substring search per hint cost a tenth of a no-op run. The hints are ASCII, so only
        // ASCII letters need folding; any other byte can only match itself.
        var lowered: [UInt8] = []
        lowered.reserveCapacity(name.utf8.count)
        for byte in name.utf8 { lowered.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
        if shortNameBytes.contains(lowered) { return true }
        return hintBytes.contains { hint in
            guard hint.count <= lowered.count else { return false }
            return (0...(lowered.count - hint.count)).contains { start in
                lowered[start] == hint[0] && lowered[start..<(start + hint.count)].elementsEqual(hint)
            }
        }
    }

    private static let hintBytes: [[UInt8]] = nameHints.map { Array($0.utf8) }
    private static let shortNameBytes: [[UInt8]] = shortNames.map { Array($0.utf8) }

    /// The values of credential parameters in `text`, as written and percent-decoded, that are
    /// long enough to be masked wherever they appear. `${VAR}` references are left out: they
    /// name a secret, which the expansion already reports.
    public static func secrets(in text: String) -> [String] {
        guard text.containsByte(UInt8(ascii: "=")) else { return [] }
        var found: [String] = []
        forEachCredential(in: text) { value in
            guard value.count >= minimumSecretLength else { return }
            found.append(String(value))
            if let decoded = URLCredentials.percentDecoded(value), decoded != String(value) { found.append(decoded) }
        }
        return found
    }

    /// `?name=value` and `&name=value` (and after `#` or `;`) with a credential's name become `name=***`, everywhere
    /// in `text`.
    public static func masked(_ text: String) -> String {
        // A byte search: every message syncr shows passes here, and most have no `=`.
        guard text.containsByte(UInt8(ascii: "=")) else { return text }
        var out = ""
        var copied = text.startIndex
        forEachCredential(in: text) { value in
            out += text[copied..<value.startIndex]
            out += "***"
            copied = value.endIndex
        }
        // Nothing masked: the text itself, not a copy (a report keeps every entry's URL).
        return copied == text.startIndex ? text : out + text[copied...]
    }

    /// Calls `body` with the value of every `?name=value` or `&name=value` (or after `#`, `;`) in `text` whose name
    /// is a credential's, in order; empty values, `${VAR}` references and `***` are skipped.
    private static func forEachCredential(in text: String, _ body: (Substring) -> Void) {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return forEachASCIICredential(in: text, body) }
        var i = text.startIndex
        while let mark = text[i...].firstIndex(where: { $0 == "?" || $0 == "&" || $0 == "#" || $0 == ";" }) {
            let nameStart = text.index(after: mark)
            let nameEnd = text[nameStart...].firstIndex(where: { !isNameCharacter($0) }) ?? text.endIndex
            i = nameEnd
            guard nameEnd > nameStart, nameEnd < text.endIndex, text[nameEnd] == "=" else { continue }
            let valueStart = text.index(after: nameEnd)
            var valueEnd = text[valueStart...].firstIndex(where: isValueEnd) ?? text.endIndex
            i = valueEnd
            // A message goes on after a URL with ": ": that colon is the message's.
            if valueEnd > valueStart, text[text.index(before: valueEnd)] == ":" { valueEnd = text.index(before: valueEnd) }
            let value = text[valueStart..<valueEnd]
            guard isCredential(name: text[nameStart..<nameEnd]), !value.isEmpty, !value.hasPrefix("${"),
                  value != "***" else { continue }
            body(value)
        }
    }

    /// `forEachCredential` over the bytes of an all-ASCII text, where every byte is a
    /// character: the same rules without building a `Character` per byte (URLs and most
    /// messages are ASCII, and every one of them passes here).
    private static func forEachASCIICredential(in text: String, _ body: (Substring) -> Void) {
        let utf8 = text.utf8
        var i = utf8.startIndex
        while let mark = utf8[i...].firstIndex(where: Self.isParameterMark) {
            let nameStart = utf8.index(after: mark)
            let nameEnd = utf8[nameStart...].firstIndex(where: { !isNameByte($0) }) ?? utf8.endIndex
            i = nameEnd
            guard nameEnd > nameStart, nameEnd < utf8.endIndex, utf8[nameEnd] == UInt8(ascii: "=") else { continue }
            let valueStart = utf8.index(after: nameEnd)
            var valueEnd = utf8[valueStart...].firstIndex(where: isValueEndByte) ?? utf8.endIndex
            i = valueEnd
            // A message goes on after a URL with ": ": that colon is the message's.
            if valueEnd > valueStart, utf8[utf8.index(before: valueEnd)] == UInt8(ascii: ":") { valueEnd = utf8.index(before: valueEnd) }
            let value = text[valueStart..<valueEnd]
            guard isCredential(name: text[nameStart..<nameEnd]), !value.isEmpty, !value.hasPrefix("${"),
                  value != "***" else { continue }
            body(value)
        }
    }

    /// `isNameCharacter` for an ASCII byte.
    private static func isNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return nameMarks.contains(b)
        }
    }

    /// `isValueEnd` for an ASCII byte: the ASCII whitespace `Character.isWhitespace` knows
    /// (tab, line feed, vertical tab, form feed, carriage return, space) and the delimiters.
    private static func isValueEndByte(_ b: UInt8) -> Bool {
        (0x09...0x0D).contains(b) || b == 0x20 || valueEnds.contains(b)
    }

    private static let nameMarks = Array("-_.~%[]".utf8)
    /// What a `name=value` pair follows: a query's `?` and `&`, a fragment's `#` (OAuth's
    /// `#access_token=`) and a path parameter's `;` (`;jsessionid=`). Compared, not looked up:
    /// every byte of every URL shown passes here.
    private static func isParameterMark(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "?") || b == UInt8(ascii: "&") || b == UInt8(ascii: "#") || b == UInt8(ascii: ";")
    }
    private static let valueEnds = Array("&#\"'<>()`".utf8)

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || "-_.~%[]".contains(c))
    }

    private static func isValueEnd(_ c: Character) -> Bool {
        c.isWhitespace || "&#\"'<>()`".contains(c)
    }
}
