extension ManifestDecoder {
    /// Reports the first byte of the manifest that is not UTF-8, if any, and whether there was
    /// one. libyaml said only "invalid trailing UTF-8 octet", one character past the place, for
    /// a Latin-1 `é` in a comment: nothing of the file's encoding, nor what to do.
    /// - Parameter raw: the file's bytes (`bytes` has each sequence that is not UTF-8 replaced).
    mutating func reportNotUTF8(in raw: [UInt8]) -> Bool {
        guard let offset = Self.firstInvalidUTF8(raw) else { return false }
        let hex = String(raw[offset], radix: 16, uppercase: true)
        let what = Self.surrogate(at: offset, in: raw).map { value in
            let bytes = raw[offset...(offset + 2)].map { "0x" + String($0, radix: 16, uppercase: true) }
            return "bytes \(bytes.joined(separator: " ")) here encode U+\(String(value, radix: 16, uppercase: true)), "
                + "half of a UTF-16 surrogate pair, which UTF-8 does not allow (CESU-8 and Java's modified UTF-8 "
                + "write a character beyond U+FFFF so)"
        } ?? "byte 0x\(hex) here starts no UTF-8 character (Latin-1 or Windows-1252 text, as some editors "
            + "save an accented letter, is not UTF-8)"
        report("", at: Self.mark(ofByte: offset, in: raw), "the manifest is not UTF-8: \(what); save it as UTF-8")
        return true
    }

    /// The UTF-16 surrogate (U+D800 to U+DFFF) that the three bytes at `offset` encode, as
    /// CESU-8 and Java's modified UTF-8 write one; UTF-8 has no such character. libyaml said
    /// only "invalid Unicode character".
    static func surrogate(at offset: Int, in raw: [UInt8]) -> UInt32? {
        guard offset + 2 < raw.count, raw[offset] == 0xED, (0xA0...0xBF).contains(raw[offset + 1]),
              raw[offset + 2] & 0xC0 == 0x80 else { return nil }
        return 0xD000 | UInt32(raw[offset + 1] & 0x3F) << 6 | UInt32(raw[offset + 2] & 0x3F)
    }

    /// Where the first sequence that is not UTF-8 starts in `bytes`, nil when all of it is.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var input = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &input) {
            case .valid(let encoded): offset += encoded.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
    }

    /// The line and column (in characters, as libyaml counts them) of the byte at `offset`,
    /// whose line breaks are counted as `lineStarts` counts them: all before it is UTF-8, as in
    /// the text whose line is quoted.
    static func mark(ofByte offset: Int, in raw: [UInt8]) -> YAMLMark {
        let starts = lineStarts(of: Array(raw[..<offset]))
        let characters = raw[starts[starts.count - 1]..<offset].reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) }
        return YAMLMark(line: starts.count, column: characters + 1)
    }
}
