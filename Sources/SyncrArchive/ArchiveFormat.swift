/// The kinds of archive syncr unpacks, told apart by their first bytes or by their file name.
public enum ArchiveFormat: String, Sendable, Equatable, CaseIterable {
    /// A zip archive (APPNOTE.TXT 4.3.7 local file header `PK\3\4`; an empty one starts with the
    /// end-of-central-directory record `PK\5\6`).
    case zip
    /// An uncompressed tar archive (POSIX ustar or GNU).
    case tar
    /// A gzip stream (RFC 1952 magic `1f 8b`). As an archive, syncr reads it as a compressed tar
    /// (`.tar.gz`, `.tgz`).
    case gzip

    /// The format the first bytes of a file show, or nil when they show none syncr reads.
    ///
    /// Give at least 263 bytes to recognise a tar (its magic sits at offset 257); 4 are enough
    /// for zip and 2 for gzip.
    public static func sniff(_ prefix: some Collection<UInt8>) -> ArchiveFormat? {
        let bytes = Array(prefix.prefix(263))
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) || bytes.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            return .zip
        }
        if bytes.starts(with: [0x1F, 0x8B]) { return .gzip }
        if bytes.count >= 263 {
            let magic = bytes[257..<263]
            // POSIX "ustar\0" (version "00" follows) or GNU's "ustar " (then " \0").
            if magic.elementsEqual(Array("ustar\0".utf8)) || magic.elementsEqual(Array("ustar ".utf8)) {
                return .tar
            }
        }
        return nil
    }

    /// The format a file name's extension announces (`.zip`, `.tar`, `.tar.gz`, `.tgz`, in any
    /// case), or nil. A bare `.gz` is a single compressed file, not an archive: nil.
    public static func fromExtension(_ fileName: String) -> ArchiveFormat? {
        let name = fileName.lowercased()
        if name.hasSuffix(".zip") { return .zip }
        if name.hasSuffix(".tar") { return .tar }
        if name.hasSuffix(".tar.gz") || name.hasSuffix(".tgz") { return .gzip }
        return nil
    }
}
