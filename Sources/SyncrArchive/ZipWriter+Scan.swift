#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// One thing found under the folder being zipped, in the form the writer stores it.
struct ZipSourceEntry: Sendable {
    enum Kind: Sendable {
        case directory
        case file(size: Int64)
        /// The link's target, stored as the entry's data.
        case symlink(target: [UInt8])
    }

    /// The stored name: relative to the folder, `/`-separated, folders ending in `/`.
    var name: [UInt8]
    /// Where to read it on disk.
    var path: String
    var kind: Kind
    /// The full `st_mode` (type and permission bits).
    var mode: UInt32
    /// Seconds since 1970 (UTC).
    var modified: Int64

    /// The stored name as text, for messages.
    var displayName: String { String(decoding: name, as: UTF8.self) }
}

/// Walks the folder to be zipped with `lstat` (links are never followed) and lists what to store,
/// sorted by the bytes of the stored names so the same tree always gives the same order. Stops
/// with `.interrupted` once `Cancellation.isRequested`, before the next name.
struct ZipSourceScanner {
    /// A `readdir` entry's name bytes (without the NUL), read in place.
    static func nameBytes(_ entry: UnsafeMutablePointer<dirent>) -> UnsafeRawBufferPointer {
        let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self)))
    }

    /// The archive being written, for messages.
    let archive: String
    /// Files and folders not to store, by device and inode: the output when it already exists
    /// inside the tree, and what the caller excludes (`Options.excluded`).
    let skip: [(dev: UInt64, ino: UInt64)]

    /// The device and inode of each path that exists (one that does not has nothing to skip).
    static func identities(_ paths: [String]) -> [(dev: UInt64, ino: UInt64)] {
        paths.compactMap { path in
            var st = stat()
            return stat(path, &st) == 0 ? (dev: UInt64(st.st_dev), ino: UInt64(st.st_ino)) : nil
        }
    }

    func scan(directory: String) throws(ArchiveError) -> [ZipSourceEntry] {
        var st = stat()
        guard stat(directory, &st) == 0 else {
            throw .io(path: directory, errno: errno, detail: "cannot read the folder to zip: \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw .io(path: directory, errno: ENOTDIR, detail: "not a folder; only folders are zipped")
        }
        var entries: [ZipSourceEntry] = []
        try walk(path: directory, prefix: [], into: &entries)
        entries.sort { $0.name.lexicographicallyPrecedes($1.name) }
        return entries
    }

    private func walk(path: String, prefix: [UInt8], into entries: inout [ZipSourceEntry]) throws(ArchiveError) {
        guard let dir = opendir(path) else {
            throw .io(path: path, errno: errno, detail: "cannot list the folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var children: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 {
                    throw .io(path: path, errno: errno, detail: "cannot list the folder: \(String(cString: strerror(errno)))")
                }
                break
            }
            // The name read in place: `entry.pointee` would copy a whole `dirent`, reading past
            // the end of readdir's buffer for a short last entry.
            let bytes = Self.nameBytes(entry)
            let name: String? = bytes.elementsEqual([0x2E]) || bytes.elementsEqual([0x2E, 0x2E])
                ? "." : String(validating: bytes, as: UTF8.self)
            guard let name else {
                let raw = String(decoding: bytes, as: UTF8.self)
                throw .unsupported(archive: archive, entry: String(decoding: prefix, as: UTF8.self) + raw,
                                   detail: "the name is not valid UTF-8 (zip names are stored as UTF-8); rename it")
            }
            if name != "." {
                // What the reader refuses, the writer does not store: the round trip holds.
                if bytes.contains(UInt8(ascii: "\\")) {
                    throw .unsupported(archive: archive, entry: String(decoding: prefix, as: UTF8.self) + name,
                                       detail: "a backslash in the name, which unzip tools on Windows take for a folder separator and syncr refuses when unpacking; rename it")
                }
                // `c:notes.txt` at the top reads as a drive letter on Windows, and the reader refuses it.
                if prefix.isEmpty, SafePath.looksLikeDrive(name) {
                    throw .unsupported(archive: archive, entry: name,
                                       detail: "the name starts like a Windows drive (a letter and a colon), which syncr refuses when unpacking; rename it")
                }
                children.append(name)
            }
        }
        for child in children {
            // A tree of millions of names takes long to walk: a cancelled task stops here.
            if Cancellation.isRequested { throw .interrupted(path: archive) }
            let full = path + "/" + child
            let stored = prefix + Array(child.utf8)
            var st = stat()
            guard lstat(full, &st) == 0 else {
                throw .io(path: full, errno: errno, detail: "cannot read: \(String(cString: strerror(errno)))")
            }
            if skip.contains(where: { UInt64(st.st_dev) == $0.dev && UInt64(st.st_ino) == $0.ino }) { continue }
            let mode = UInt32(st.st_mode)
            let modified = Int64(st.st_mtim.tv_sec)
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let name = stored + [0x2F]
                try checkNameLength(name)
                entries.append(ZipSourceEntry(name: name, path: full, kind: .directory, mode: mode, modified: modified))
                try walk(path: full, prefix: name, into: &entries)
            case S_IFREG:
                try checkNameLength(stored)
                entries.append(ZipSourceEntry(name: stored, path: full, kind: .file(size: Int64(st.st_size)),
                                              mode: mode, modified: modified))
            case S_IFLNK:
                try checkNameLength(stored)
                let target = try readLink(full, name: stored)
                entries.append(ZipSourceEntry(name: stored, path: full, kind: .symlink(target: target),
                                              mode: mode, modified: modified))
            default:
                // Fifos, sockets and devices have no content a zip can hold; leaving them out
                // silently would make an archive that looks complete and is not.
                let kind = switch st.st_mode & S_IFMT {
                case S_IFIFO: "a named pipe (fifo)"
                case S_IFSOCK: "a socket"
                case S_IFCHR, S_IFBLK: "a device"
                default: "a special file"
                }
                throw .unsupported(archive: archive, entry: String(decoding: stored, as: UTF8.self),
                                   detail: "\(kind) cannot be zipped; move it out of the folder")
            }
        }
    }

    private func checkNameLength(_ name: [UInt8]) throws(ArchiveError) {
        // The headers hold the name's length in 16 bits (APPNOTE 4.4.10).
        if name.count > 0xFFFF {
            throw .unsupported(archive: archive, entry: String(decoding: name.prefix(200), as: UTF8.self) + "...",
                               detail: "the path is longer than the 65,535 bytes a zip name holds")
        }
    }

    /// The link's target, if it stays inside the folder once resolved lexically against the
    /// link's own place (the same rule the extractor applies: `SafePath.linkProblem`).
    private func readLink(_ path: String, name: [UInt8]) throws(ArchiveError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard n >= 0 else {
            throw .io(path: path, errno: errno, detail: "cannot read the symbolic link: \(String(cString: strerror(errno)))")
        }
        let target = Array(buffer[0..<n])
        let entry = String(decoding: name, as: UTF8.self)
        guard let text = String(validating: target, as: UTF8.self) else {
            throw .unsupported(archive: archive, entry: entry, detail: "the symbolic link's target is not valid UTF-8")
        }
        let components = SafePath.split(entry)
        if let problem = SafePath.linkProblem(linkComponents: components, target: text) {
            let remedy = problem == .absolute ? "make it relative, or replace it with the file" : "replace it with the file or remove it"
            throw .unsafePath(archive: archive, entry: entry,
                              detail: problem.detail(target: text, place: "the folder being zipped") + "; " + remedy)
        }
        return target
    }
}
