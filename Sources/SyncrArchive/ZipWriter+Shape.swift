extension ZipWriter {
    /// What `write(directory:)` would store of a folder besides file contents, as bytes to
    /// compare or hash: one line per entry in archive order, with its kind, permission bits and,
    /// for a link, its target. Folders (empty ones too) and links are there; a file's bytes and
    /// times are not (the caller compares those its own way).
    ///
    /// An upload with `zip: true` is skipped while its folder is unchanged: a `chmod +x`, a new
    /// empty folder or a file replaced by a link to the same bytes changes the archive, and
    /// shows here.
    /// - Parameter excluded: as `Options.excluded`: what `write` leaves out.
    /// - Throws: what `write` would throw while scanning the folder.
    public static func shape(of directory: String, excluding excluded: [String] = []) throws(ArchiveError) -> [UInt8] {
        let scanner = ZipSourceScanner(archive: directory, skip: ZipSourceScanner.identities(excluded))
        let entries = try scanner.scan(directory: directory)
        var out: [UInt8] = []
        for entry in entries {
            out += entry.name
            out.append(0)
            switch entry.kind {
            case .directory: out += Array("d".utf8)
            case .file: out += Array("f".utf8)
            case .symlink(let target): out += Array("l".utf8) + target
            }
            out += Array(" \(String(entry.mode & 0o7777, radix: 8))\n".utf8)
        }
        return out
    }
}
