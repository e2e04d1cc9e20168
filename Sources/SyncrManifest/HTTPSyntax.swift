/// The small parts of HTTP syntax the manifest checks before anything is sent.
enum HTTPSyntax {
    /// RFC 9110 §5.6.2: `token = 1*tchar`, tchar = ALPHA / DIGIT / one of ``!#$%&'*+-.^_`|~``.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { s in
            guard s.isASCII else { return false }
            let v = s.value
            if (v >= 48 && v <= 57) || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) { return true }
            return "!#$%&'*+-.^_`|~".unicodeScalars.contains(s)
        }
    }

    /// A header value must not contain CR, LF or NUL: any of them would let a value inject
    /// another header (RFC 9110 §5.5).
    static func hasLineBreak(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
    }

    /// Whether `text` has the shape of a media type (RFC 9110 §8.3.1): `type/subtype`, both
    /// tokens, then optionally `;` and parameters (not parsed further; no control characters
    /// other than tab).
    static func isMediaType(_ text: String) -> Bool {
        let main: Substring
        let parameters: Substring
        if let semicolon = text.firstIndex(of: ";") {
            main = text[..<semicolon]
            parameters = text[semicolon...]
        } else {
            main = text[...]
            parameters = ""
        }
        let trimmed = main.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        let parts = String(trimmed).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, isToken(String(parts[0])), isToken(String(parts[1])) else { return false }
        return !parameters.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    /// Whether `text` is an absolute `http://` or `https://` URL with a non-empty host, a valid
    /// port if any, and no whitespace or control characters (curl would reject or re-encode them).
    static func isHTTPURL(_ text: String) -> Bool {
        // On the bytes: every entry's URL is checked when a manifest loads, and the same test on
        // Characters cost a tenth of a plan's decoding. Every byte of a multi-byte scalar is
        // >= 0x80, so no byte test below can match inside one.
        if let answer = text.utf8.withContiguousStorageIfAvailable(isHTTPURL) { return answer }
        return Array(text.utf8).withUnsafeBufferPointer(isHTTPURL)
    }

    /// Why `text` is not an http(s) URL, in words that quote nothing of it (it may be a
    /// variable's expansion); nil when it is one. Only asked once a URL was refused.
    static func urlProblem(_ text: String) -> String? {
        guard !isHTTPURL(text) else { return nil }
        let bytes = Array(text.utf8)
        if bytes.contains(0x20) { return "a URL cannot contain a space; write each as %20" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "a URL cannot contain a line break or control character" }
        // `localhost:8080/x`: what follows the colon is a port, not `//`.
        let portAfter = bytes.firstIndex(of: UInt8(ascii: ":")).map { colon in
            let rest = bytes[(colon + 1)...].prefix { $0 != UInt8(ascii: "/") }
            return !rest.isEmpty && rest.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        } ?? false
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), !portAfter,
              bytes[..<colon].allSatisfy({ isTokenByte($0) }), colon > 0 else {
            return "it has no scheme; write http://, https:// or s3:// in front"
        }
        let scheme = String(decoding: bytes[..<colon].map { $0 | 0x20 }, as: UTF8.self)
        guard scheme == "http" || scheme == "https" else {
            return "its scheme is not http, https or s3 (the only ones syncr speaks)"
        }
        guard bytes[(colon + 1)...].starts(with: "//".utf8) else { return "expected // after \(scheme):" }
        let authority = bytes[(colon + 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority[...]
        if hostPort.isEmpty || hostPort.first == UInt8(ascii: ":") { return "it has no host" }
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else { return "its IPv6 address has no closing ]" }
            if close == hostPort.startIndex + 1 { return "it has no host (empty brackets)" }
            if close + 1 < hostPort.endIndex, hostPort[close + 1] != UInt8(ascii: ":") {
                return "only a :port may follow the ] of an IPv6 address"
            }
        }
        return "its port must be a number from 0 to 65535"
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
            || b == UInt8(ascii: ".")
    }

    private static func isHTTPURL(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !b.contains(where: { $0 <= 0x20 || $0 == 0x7F }),
              let colon = b.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let scheme = b[..<colon].map { $0 | 0x20 }
        guard scheme.elementsEqual("http".utf8) || scheme.elementsEqual("https".utf8),
              b[(colon + 1)...].starts(with: "//".utf8) else { return false }
        let rest = b[(colon + 3)...]
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        // userinfo ends at the last '@' of the authority
        let hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority
        let host: Slice<UnsafeBufferPointer<UInt8>>
        let port: Slice<UnsafeBufferPointer<UInt8>>?
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else { return false }
            host = hostPort[(hostPort.startIndex + 1)..<close]
            let after = hostPort[(close + 1)...]
            if after.isEmpty {
                port = nil
            } else {
                guard after.first == UInt8(ascii: ":") else { return false }
                port = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: UInt8(ascii: ":")) {
            host = hostPort[..<colon]
            port = hostPort[(colon + 1)...]
        } else {
            host = hostPort
            port = nil
        }
        guard !host.isEmpty else { return false }
        if let port, !port.isEmpty {
            guard port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
            var n = 0
            for digit in port {
                n = n * 10 + Int(digit - UInt8(ascii: "0"))
                if n > 65535 { return false }
            }
        }
        return true
    }
}

/// Finds the key a user probably meant, for `did you mean '...'?`.
enum KeySuggestion {
    /// Words people reach for that are not edit-distance close to the real key, with what they
    /// mean in each block, most likely first: the first one valid where the key was written wins
    /// (`source` is `url` in a download, `from` in an upload; `file` is `to` in a download).
    private static let synonyms: [String: [String]] = [
        "retry": ["retries"], "dest": ["to"], "destination": ["to"], "target": ["to"],
        "path": ["from", "to"], "output": ["to"], "file": ["from", "to"], "input": ["from"],
        "sha": ["sha256"], "sha-256": ["sha256"], "checksum": ["sha256"],
        "header": ["headers"], "download": ["downloads"], "upload": ["uploads"],
        "concurrency": ["jobs"], "parallel": ["jobs"],
        "uri": ["url", "to"], "link": ["url", "to"], "url": ["to"],
        "src": ["url", "from"], "source": ["url", "from"],
        "verb": ["method"], "http_method": ["method"], "mime": ["content_type"],
        "mime_type": ["content_type"], "type": ["content_type"], "form": ["fields"],
        "form_fields": ["fields"], "form_data": ["fields"], "params": ["fields"],
        "name": ["field"], "archive": ["zip"], "compress": ["zip"], "reproducible": ["deterministic"],
    ]

    /// The closest valid key, or nil when nothing is close enough to be a plausible typo.
    static func suggestion(for key: String, among valid: [String]) -> String? {
        let lower = key.lowercased()
        // A key that is only in the wrong case wins over any synonym (`URL` is `url`, not `to`).
        if let exact = valid.first(where: { $0.lowercased() == lower }) { return exact }
        if let s = synonyms[lower]?.first(where: valid.contains) { return s }
        let limit = lower.count <= 4 ? 1 : 2
        var best: (key: String, distance: Int)?
        let length = lower.unicodeScalars.count
        // The distance is at least the difference in length: a key far longer than any valid
        // one (20,000 characters took seconds over a manifest) is compared with none.
        for candidate in valid where abs(candidate.unicodeScalars.count - length) <= limit {
            let d = distance(lower, candidate.lowercased())
            if d <= limit, d < best?.distance ?? Int.max { best = (candidate, d) }
        }
        return best?.key
    }

    /// Optimal string alignment distance: Levenshtein plus adjacent transpositions, so that
    /// `sah256` is one edit from `sha256`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
