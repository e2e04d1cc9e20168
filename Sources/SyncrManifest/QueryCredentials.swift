/// Query parameters that carry credentials: `?token=...`, `access_token`, `api_key`, `sig`,
/// `X-Amz-Signature`, `X-Amz-Credential`, ... Presigned and token URLs are written literally
/// into manifests, and their values must no more reach a terminal, a CI log or a report than a
/// password in the URL's user information.
///
/// A URL carried in another parameter's value (a redirect's `?to=`, a login's `?next=`, a server's
/// error message quoting the request) has a query of its own, percent-encoded once or more
/// (`?to=https%3A%2F%2Fcdn%2Ff%3Ftoken%3D...`) or not at all (`?to=https://cdn/f?token=...`): its
/// credentials are found by name the same way, and masked in place (`token%3D***`).
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
        isCredential(utf8: name.utf8)
    }

    /// `isCredential(name:)` for a name's UTF-8 bytes.
    private static func isCredential(utf8 name: some Collection<UInt8>) -> Bool {
        // On bytes: every message and URL syncr shows passes here, and `lowercased()` with a
        // substring search per hint cost a tenth of a no-op run. The hints are ASCII, so only
        // ASCII letters need folding; any other byte can only match itself.
        var lowered: [UInt8] = []
        lowered.reserveCapacity(name.count)
        for byte in name { lowered.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
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
        var found: [String] = []
        for range in credentialValues(in: text) {
            let value = text[range]
            guard value.count >= minimumSecretLength else { continue }
            found.append(String(value))
            // A value in a nested URL is encoded once more per level (`%252F` for a `/` one
            // level down): each decoding is what some server along the way may echo. Each one
            // that changes the value shortens it, so this ends.
            var written = String(value)
            while written.containsByte(UInt8(ascii: "%")), let decoded = URLCredentials.percentDecoded(Substring(written)),
                  decoded != written {
                found.append(decoded)
                written = decoded
            }
        }
        return found
    }

    /// `?name=value` and `&name=value` (and after `#` or `;`) with a credential's name become `name=***`, everywhere
    /// in `text`; so do they in a URL carried in another value, encoded (`%3Ftoken%3D***`) or not.
    public static func masked(_ text: String) -> String {
        let values = credentialValues(in: text)
        // Nothing masked: the text itself, not a copy (a report keeps every entry's URL).
        guard !values.isEmpty else { return text }
        var out = ""
        var copied = text.startIndex
        for value in values {
            out += text[copied..<value.lowerBound]
            out += "***"
            copied = value.upperBound
        }
        return out + text[copied...]
    }

    /// The ranges of `text` that hold a credential's value, in order and not overlapping: those
    /// of its `name=value` pairs, and those of pairs percent-encoded inside another value.
    private static func credentialValues(in text: String) -> [Range<String.Index>] {
        // Byte searches: every message syncr shows passes here, and most have no `=` and no `%`;
        // an encoded pair (`%3D`) is looked for only in text with a `%`.
        let encoded = text.containsByte(UInt8(ascii: "%"))
        guard encoded || text.containsByte(UInt8(ascii: "=")) else { return [] }
        var found: [Range<String.Index>] = []
        forEachCredential(in: text) { found.append($0.startIndex..<$0.endIndex) }
        guard encoded else { return found }
        let nested = encodedCredentialValues(in: text)
        guard !nested.isEmpty else { return found }
        // A raw value may hold an encoded pair (`?token=a%26sig%3Db`), and the reverse: the
        // union is masked, each stretch once.
        var merged: [Range<String.Index>] = []
        for range in (found + nested).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
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
            // Another parameter's value may be a URL with a query of its own, not encoded
            // (`?to=https://cdn/f?token=...`): its pairs are looked for from the value's start.
            i = valueStart
            guard isCredential(name: text[nameStart..<nameEnd]) else { continue }
            var valueEnd = text[valueStart...].firstIndex(where: isValueEnd) ?? text.endIndex
            i = valueEnd
            // A message goes on after a URL with ": ": that colon is the message's.
            if valueEnd > valueStart, text[text.index(before: valueEnd)] == ":" { valueEnd = text.index(before: valueEnd) }
            let value = text[valueStart..<valueEnd]
            guard !value.isEmpty, !value.hasPrefix("${"), value != "***" else { continue }
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
            // As in `forEachCredential`: a value that is no credential's may hold pairs.
            i = valueStart
            guard isCredential(utf8: utf8[nameStart..<nameEnd]) else { continue }
            var valueEnd = utf8[valueStart...].firstIndex(where: isValueEndByte) ?? utf8.endIndex
            i = valueEnd
            // A message goes on after a URL with ": ": that colon is the message's.
            if valueEnd > valueStart, utf8[utf8.index(before: valueEnd)] == UInt8(ascii: ":") { valueEnd = utf8.index(before: valueEnd) }
            let value = text[valueStart..<valueEnd]
            guard !value.isEmpty, !value.hasPrefix("${"), value != "***" else { continue }
            body(value)
        }
    }

    /// The values of credential pairs written percent-encoded in `text`, in order: `%3F`
    /// (`?`), `%26` (`&`), `%23` (`#`) or `%3B` (`;`), a name, `%3D` (`=`), and the value up to
    /// an encoded delimiter (`%26`, `%20`, ...) or a raw one. Each level of encoding puts a
    /// `25` after the `%` (`%253D` is `=` two URLs down); the `=` is at the mark's depth, and a
    /// delimiter at that depth or a shallower one ends the value, while a deeper one is part of
    /// it (the value's own `%2F` is `%252F` at depth 1).
    private static func encodedCredentialValues(in text: String) -> [Range<String.Index>] {
        let offsets = text.utf8.withContiguousStorageIfAvailable(encodedCredentialOffsets)
            ?? Array(text.utf8).withUnsafeBufferPointer(encodedCredentialOffsets)
        let utf8 = text.utf8
        return offsets.map {
            utf8.index(utf8.startIndex, offsetBy: $0.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: $0.upperBound)
        }
    }

    /// `encodedCredentialValues` as byte offsets.
    private static func encodedCredentialOffsets(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var i = 0
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "%"), let mark = percentEncoded(bytes, at: i), isParameterMark(mark.byte) else {
                i += 1
                continue
            }
            let nameStart = mark.end
            var nameEnd = nameStart
            // A name's own `%` would run into the `%3D` after it: names here are plain.
            while nameEnd < bytes.count, bytes[nameEnd] != UInt8(ascii: "%"), isNameByte(bytes[nameEnd]) { nameEnd += 1 }
            i = nameEnd
            guard nameEnd > nameStart, let equals = percentEncoded(bytes, at: nameEnd), equals.byte == UInt8(ascii: "="),
                  equals.depth == mark.depth else { continue }
            let valueStart = equals.end
            i = valueStart
            guard isCredential(utf8: bytes[nameStart..<nameEnd]) else { continue }
            var valueEnd = valueStart
            while valueEnd < bytes.count {
                let b = bytes[valueEnd]
                if b == UInt8(ascii: "%"), let c = percentEncoded(bytes, at: valueEnd), c.depth <= mark.depth, isValueEndByte(c.byte) {
                    break
                }
                if b < 0x80 ? isValueEndByte(b) : startsWhitespace(bytes, at: valueEnd) { break }
                valueEnd += 1
            }
            i = valueEnd
            // A message goes on after a URL with ": ": that colon is the message's.
            if valueEnd > valueStart, bytes[valueEnd - 1] == UInt8(ascii: ":") { valueEnd -= 1 }
            let value = bytes[valueStart..<valueEnd]
            guard !value.isEmpty, !value.starts(with: "${".utf8), !value.elementsEqual("***".utf8) else { continue }
            found.append(valueStart..<valueEnd)
        }
        return found
    }

    /// The character percent-encoded at `i`, how many times it was encoded (`%3F` once, `%253F`
    /// twice: each encoding writes the `%` before it as `%25`) and where its encoding ends.
    static func percentEncoded(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (byte: UInt8, depth: Int, end: Int)? {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "%") else { return nil }
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var j = i + 1
        var depth = 0
        while j + 1 < bytes.count, let high = hex(bytes[j]), let low = hex(bytes[j + 1]) {
            depth += 1
            j += 2
            let byte = high << 4 | low
            if byte != UInt8(ascii: "%") { return (byte, depth, j) }
        }
        // `%25` with no pair after it: a `%` itself.
        return depth > 0 ? (UInt8(ascii: "%"), depth, j) : nil
    }

    /// Whether the character whose UTF-8 starts at `i` is whitespace, as `Character.isWhitespace`
    /// says for the text scanned by `Character` (a no-break space ends a value there too).
    private static func startsWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        var iterator = bytes[i...].makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return false }
        return scalar.properties.isWhitespace
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
