/// Reads a lockfile in exactly the form `Lockfile.yaml` writes, line by line, without building a
/// YAML tree: for 100,000 downloads the tree cost seconds and hundreds of MiB. Anything else
/// (a hand edit, a merge tool's reflow, an unknown key) gives nil, and `LockfileReader` reads
/// the file with the YAML parser, which also says where a problem is.
enum LockfileLines {
    static func read(_ bytes: [UInt8]) -> Lockfile? {
        var manifest: String?
        var entries: [LockedEntry] = []
        var destinations: Set<String> = []
        var current: Record?
        var sawVersion = false
        var inDownloads = false
        var lineStart = 0
        func finish() -> Bool {
            guard let record = current else { return true }
            // A destination locked twice is said by the YAML path, with both lines.
            guard let entry = record.entry(), destinations.insert(entry.to).inserted else { return false }
            entries.append(entry)
            return true
        }
        while lineStart < bytes.count {
            var end = lineStart
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            let line = bytes[lineStart..<end]
            lineStart = end + 1
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            if inDownloads, line.starts(with: "  - ".utf8) {
                guard finish(), let (key, value) = field(line.dropFirst(4)), key == "to" else { return nil }
                current = Record(to: value)
            } else if inDownloads, line.starts(with: "    ".utf8), current != nil {
                guard let (key, value) = field(line.dropFirst(4)), current!.set(key, value) else { return nil }
            } else if !inDownloads, let (key, value) = field(line[...]) {
                switch key {
                case "version" where value == String(Lockfile.currentVersion) && !sawVersion: sawVersion = true
                case "manifest" where manifest == nil: manifest = value
                case "downloads" where value == "": inDownloads = true
                case "downloads" where value == "[]": break
                default: return nil
                }
            } else {
                return nil
            }
        }
        guard sawVersion, finish() else { return nil }
        return Lockfile(manifest: manifest ?? "", entries: entries)
    }

    /// One record as its lines come, each key at most once.
    private struct Record {
        var fields: [String?] = Array(repeating: nil, count: Record.keys.count)
        static let keys = ["to", "url", "final_url", "size", "etag", "last_modified", "sha256", "unzip"]

        init(to: String) { fields[0] = to }

        /// Sets `key`; false for an unknown or repeated one.
        mutating func set(_ key: String, _ value: String) -> Bool {
            guard let i = Self.keys.firstIndex(of: key), fields[i] == nil else { return false }
            fields[i] = value
            return true
        }

        /// The entry, checked as the YAML path checks it; nil when that would refuse it.
        func entry() -> LockedEntry? {
            guard let to = fields[0], let url = fields[1] else { return nil }
            var e = LockedEntry(to: to, url: url, finalURL: fields[2], etag: fields[4], lastModified: fields[5],
                                sha256: fields[6]?.lowercased(), unzip: fields[7] == "true")
            if let size = fields[3] {
                guard let n = Int64(size), n >= 0 else { return nil }
                e.size = n
            }
            if let hex = e.sha256, hex.utf8.count != 64 || !hex.allSatisfy(\.isHexDigit) { return nil }
            return e
        }
    }

    /// `key: value`, the value unquoted; nil unless it is a plain word or number, or a
    /// double-quoted string with only the escapes the writer uses.
    private static func field(_ line: ArraySlice<UInt8>) -> (String, String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let key = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
        guard !key.isEmpty, key.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) }) else { return nil }
        var rest = line[(colon + 1)...]
        if rest.isEmpty { return (key, "") }
        guard rest.first == UInt8(ascii: " ") else { return nil }
        rest = rest.dropFirst()
        if rest.first == UInt8(ascii: "\"") { return unquoted(rest).map { (key, $0) } }
        let word = String(decoding: rest, as: UTF8.self)
        guard word == "[]" || word == "true" || word.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return (key, word)
    }

    /// The text of a double-quoted scalar that ends the line: `\\`, `\"` and `\uXXXX` only.
    private static func unquoted(_ quoted: ArraySlice<UInt8>) -> String? {
        guard quoted.count >= 2, quoted.last == UInt8(ascii: "\"") else { return nil }
        let body = quoted.dropFirst().dropLast()
        guard body.contains(UInt8(ascii: "\\")) || body.contains(UInt8(ascii: "\"")) else {
            return String(decoding: body, as: UTF8.self)
        }
        var out: [UInt8] = []
        var i = body.startIndex
        while i < body.endIndex {
            let b = body[i]
            if b == UInt8(ascii: "\"") { return nil }
            guard b == UInt8(ascii: "\\") else { out.append(b); i += 1; continue }
            guard i + 1 < body.endIndex else { return nil }
            switch body[i + 1] {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                out.append(body[i + 1])
                i += 2
            case UInt8(ascii: "u"):
                guard i + 6 <= body.endIndex,
                      let v = UInt32(String(decoding: body[(i + 2)..<(i + 6)], as: UTF8.self), radix: 16),
                      let scalar = Unicode.Scalar(v) else { return nil }
                out += Array(String(Character(scalar)).utf8)
                i += 6
            default:
                return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
