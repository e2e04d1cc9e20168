extension ManifestDecoder {
    /// Reports the first byte of the manifest that is not UTF-8, if any, and whether there was
    /// one. libyaml said only "invalid trailing UTF-8 octet", one character past the place, for
    /// a Latin-1 `é` in a comment: nothing of the file's encoding, nor what to do.
    /// - Parameter raw: the file's bytes (`bytes` has each sequence that is not UTF-8 replaced).
    mutating func reportNotUTF8(in raw: [UInt8]) -> Bool {
        guard let offset = Self.firstInvalidUTF8(raw) else { return false }
        let hex = String(raw[offset], radix: 16, uppercase: true)
        report("", at: Self.mark(ofByte: offset, in: raw),
               "the manifest is not UTF-8: byte 0x\(hex) here starts no UTF-8 character (Latin-1 or Windows-1252 "
               + "text, as some editors save an accented letter, is not UTF-8); save it as UTF-8")
        return true
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
