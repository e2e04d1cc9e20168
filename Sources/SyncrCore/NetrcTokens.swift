/// The tokens of a netrc file, as curl splits them: separated by spaces, tabs and line ends;
/// a token may be quoted (curl 7.84 and later), with curl's escapes inside. Read from the
/// file's bytes, whatever their encoding, since curl reads them so.
struct NetrcTokens {
    let bytes: [UInt8]
    var i = 0
    /// The line (1-based) the last token returned starts on.
    private(set) var line = 1
    /// Whether the last token returned was the first of its line (a `#` there starts a comment).
    private(set) var startsLine = true
    /// The line of the first quoted token with no closing quote on its line: curl refuses the
    /// whole file then (the request fails with a read error).
    private(set) var unterminatedQuote: Int?

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    mutating func next() -> [UInt8]? {
        var newLine = i == 0
        while i < bytes.count, Self.isSpace(bytes[i]) {
            if bytes[i] == 0x0A { line += 1; newLine = true }
            i += 1
        }
        startsLine = newLine
        guard i < bytes.count else { return nil }
        var token: [UInt8] = []
        if bytes[i] == UInt8(ascii: "\"") {
            let start = line
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == 0x0A { line += 1 }
                if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    i += 1
                    token.append(Self.escaped(bytes[i]))
                } else {
                    token.append(bytes[i])
                }
                i += 1
            }
            // curl reads a line at a time: a quote still open at the line's end is never closed.
            if (i >= bytes.count || line != start) && unterminatedQuote == nil { unterminatedQuote = start }
            i += 1
        } else {
            while i < bytes.count, !Self.isSpace(bytes[i]) {
                token.append(bytes[i])
                i += 1
            }
        }
        return token
    }

    /// What curl makes of a backslash and `b` in a quoted token.
    static func escaped(_ b: UInt8) -> UInt8 {
        switch b {
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return b
        }
    }

    /// Past the rest of the current line (a comment).
    mutating func skipLine() {
        while i < bytes.count, bytes[i] != 0x0A { i += 1 }
    }

    /// Past a macro's name and its body, which ends at an empty line.
    mutating func skipMacro() {
        _ = next()
        while i < bytes.count {
            if bytes[i] == 0x0A, i + 1 < bytes.count, bytes[i + 1] == 0x0A { i += 2; line += 2; return }
            if bytes[i] == 0x0A { line += 1 }
            i += 1
        }
    }
}
