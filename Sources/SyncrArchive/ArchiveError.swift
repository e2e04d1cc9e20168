/// Why an archive could not be read, written or unpacked. Every case names the archive and,
/// where there is one, the entry.
public enum ArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The archive's structure is broken or cut short.
    case corrupt(archive: String, entry: String?, detail: String)
    /// A feature syncr does not read (encryption, a compression method, multi-disk archives).
    case unsupported(archive: String, entry: String?, detail: String)
    /// An entry's data does not match its CRC-32 or its recorded size.
    case checksum(archive: String, entry: String, detail: String)
    /// An entry's path or link would leave the destination, or is not a safe name.
    case unsafePath(archive: String, entry: String, detail: String)
    /// Two entries with the same name. `first` is the earlier entry, where it is stored under
    /// another name than `entry` (`./a.txt` and `a.txt`), and `name` the one they share;
    /// `strippedBy` is the setting whose stripping made two different paths one (`v1/a.txt`
    /// and `v2/a.txt`, both `a.txt` with one component stripped).
    case duplicate(archive: String, entry: String, first: String? = nil, name: String? = nil, strippedBy: String? = nil)
    /// A limit (entry count, total size, compression ratio) was exceeded: likely a zip bomb.
    case limit(archive: String, entry: String?, detail: String)
    /// `strip_components` (`count`, set by `setting`: the manifest's key, or `syncr unzip`'s
    /// `--strip-components`) leaves nothing of any entry's path (`entry` is nil; a
    /// value names one entry, for callers that check entries one by one): the archive is not
    /// laid out as the caller expects, and an empty folder would pass for success. (Some
    /// entries dropped while others stay is what `tar --strip-components` does, and is kept.)
    case stripped(archive: String, entry: String?, count: Int, setting: String = "strip_components")
    /// A local file operation failed.
    case io(path: String, errno: Int32, detail: String)
    /// The task doing the work was cancelled (Ctrl-C on `syncr zip` or `syncr unzip`); what
    /// was half made is removed.
    case interrupted(path: String)

    /// One line, with control characters written as `\u{1B}`: names come from the archive,
    /// and one holding an escape sequence or a line break could rewrite the terminal or forge
    /// a CI log line ("syncr: unpacked ..." over the error).
    public var description: String {
        let text = words
        guard text.unicodeScalars.contains(where: Self.isControl) else { return text }
        var out = ""
        for s in text.unicodeScalars {
            if Self.isControl(s) { out += "\\u{" + String(s.value, radix: 16, uppercase: true) + "}" } else { out.unicodeScalars.append(s) }
        }
        return out
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F...0x9F).contains(s.value) }

    private var words: String {
        switch self {
        case .corrupt(let archive, let entry, let detail):
            return "\(archive)\(entry.map { ": \($0)" } ?? ""): corrupt archive: \(detail)"
        case .unsupported(let archive, let entry, let detail):
            return "\(archive)\(entry.map { ": \($0)" } ?? ""): \(detail)"
        case .checksum(let archive, let entry, let detail):
            return "\(archive): \(entry): \(detail)"
        case .unsafePath(let archive, let entry, let detail):
            return "\(archive): \(entry): refused: \(detail)"
        case .duplicate(let archive, let entry, let first?, let name, let setting?):
            return "\(archive): \(first) and \(entry) both unpack to \(name ?? entry) once \(setting) has removed their "
                + "leading folders; lower \(setting) (unpacking the archive once without it shows the layout)"
        case .duplicate(let archive, let entry, let first?, let name, nil):
            return "\(archive): \(first) and \(entry) both unpack to \(name ?? entry): the archive holds this name twice"
        case .duplicate(let archive, let entry, nil, _, _):
            return "\(archive): \(entry): the archive holds this name twice"
        case .limit(let archive, let entry, let detail):
            return "\(archive)\(entry.map { ": \($0)" } ?? ""): stopped: \(detail)"
        case .stripped(let archive, let entry?, let count, let setting):
            return "\(archive): \(entry): \(setting) \(count) leaves nothing of this file's path, and would drop it: "
                + "the archive is not laid out as expected; lower \(setting) (unpacking it once without it shows the layout)"
        case .stripped(let archive, nil, let count, let setting):
            return "\(archive): \(setting) \(count) leaves nothing of any entry's path: the archive is not laid out as "
                + "expected; lower \(setting) (unpacking it once without it shows the layout)"
        case .io(let path, _, let detail):
            return "\(path): \(detail)"
        case .interrupted(let path):
            return "\(path): interrupted"
        }
    }
}
