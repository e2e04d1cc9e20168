#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import SyncrDigest

/// Folders that syncr fills as a whole (unpacked archives): built beside the destination, then
/// swapped in, in one step.
enum FolderReplace {
    /// Added to the staging folder's name for the old folder while it is moved aside.
    static let asideSuffix = ".old"

    /// Puts `staging` at `destination`: swapped in one step with `renameat2(RENAME_EXCHANGE)`
    /// when a folder is there (the old one then sits at `staging` and is removed), or renamed
    /// when nothing is. Where the exchange is not supported, the old folder is moved aside first:
    /// for that short moment the destination is absent, never half-written.
    static func replace(_ destination: String, with staging: String, display: String, flush: Bool = true) throws(FileError) {
        switch FS.kind(destination) {
        case .missing:
            if rename(staging, destination) != 0 {
                throw FileError(path: display, operation: "move the unpacked folder into place", errno: errno)
            }
        case .directory:
            if syncr_exchange(staging, destination) == 0 {
                removeTree(staging)
            } else {
                let aside = staging + asideSuffix
                removeTree(aside)
                guard rename(destination, aside) == 0 else {
                    throw FileError(path: display, operation: "move the old folder aside", errno: errno)
                }
                guard rename(staging, destination) == 0 else {
                    let code = errno
                    _ = rename(aside, destination)
                    throw FileError(path: display, operation: "move the unpacked folder into place", errno: code)
                }
                removeTree(aside)
            }
        case .file, .other:
            throw FileError(path: display, operation: "unpack here (a file is in the way; move it and run again)", errno: ENOTDIR)
        }
        if flush { FS.syncDirectory(FS.parentFolder(destination)) }
    }

    /// Flushes every file and folder of an unpacked tree (`fdatasync`, on the flush pool), before
    /// the tree takes the destination's name: renamed in unflushed, a power cut could leave the
    /// destination with files that are empty or short. At most `FlushPool.width` are open at once,
    /// so that the file system commits them together and a large archive runs out of no
    /// descriptors. Symbolic links and anything else that is neither a file nor a folder are
    /// left to their folder's flush, and so is what the archive's modes let no one read (a
    /// folder without `r`, a file of mode 000: opening them to flush fails, and failing the
    /// whole unpack for it would help no one). Returns how many it found to flush.
    @discardableResult
    static func flushTree(_ root: String, flusher: FlushPool) async throws -> Int {
        let paths = try await BlockingIO.run { () throws(FileError) -> [(path: String, folder: Bool)] in
            var found: [(path: String, folder: Bool)] = []
            try collect(root, into: &found)
            return found
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = paths.makeIterator()
            func add() {
                guard let entry = next.next() else { return }
                group.addTask { try await flush(entry.path, folder: entry.folder, flusher: flusher) }
            }
            for _ in 0..<FlushPool.width { add() }
            while try await group.next() != nil { add() }
        }
        return paths.count
    }

    /// The files and folders under `folder` (it included, last), by `lstat`.
    private static func collect(_ folder: String, into found: inout [(path: String, folder: Bool)]) throws(FileError) {
        guard let names = names(in: folder) else {
            if Self.unreadable(errno) { return }
            throw FileError(path: folder, operation: "list", errno: errno)
        }
        for name in names {
            let path = folder + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { throw FileError(path: path, operation: "look at", errno: errno) }
            switch st.st_mode & S_IFMT {
            case S_IFDIR: try collect(path, into: &found)
            case S_IFREG: found.append((path, false))
            default: break
            }
        }
        found.append((folder, true))
    }

    private static func flush(_ path: String, folder: Bool, flusher: FlushPool) async throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (folder ? O_DIRECTORY : 0))
        guard fd >= 0 else {
            if unreadable(errno) { return }
            throw FileError(path: path, operation: "open to flush", errno: errno)
        }
        defer { close(fd) }
        try await flusher.flush(fd: fd, path: path)
    }

    private static func unreadable(_ code: Int32) -> Bool { code == EACCES || code == EPERM }

    /// The names in `folder`, without `.` and `..`; nil when it cannot be listed (`errno` says
    /// why).
    private static func names(in folder: String) -> [String]? {
        guard let dir = opendir(folder) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = directoryEntryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The first path inside `folder` (relative, in listing order) that `other` does not hold:
    /// what replacing `folder` by `other` would delete that the new folder does not bring back.
    static func firstPathMissing(from other: String, in folder: String) -> String? {
        guard let walk = FileManager.default.enumerator(atPath: folder) else { return nil }
        var st = stat()
        // Not stopped by a signal: an unpack finishes once begun, and a walk cut short would
        // say nothing is there.
        while let relative = walk.nextObject() as? String {
            if lstat(other + "/" + relative, &st) != 0 { return relative }
        }
        return nil
    }

    /// Removes a folder and everything in it without following symbolic links.
    static func removeTree(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            unlink(path)
            return
        }
        chmod(path, 0o700)  // a read-only folder from an archive must still be emptied
        for name in names(in: path) ?? [] { removeTree(path + "/" + name) }
        rmdir(path)
    }

    /// A digest of a tree's shape: every path with its type, size, modification time, mode and
    /// link target, in sorted order. Equal digests mean nothing was added, removed or touched
    /// since; computing it costs one `lstat` per entry, no reading.
    static func fingerprint(_ root: String) -> String? {
        guard FS.kind(root) == .directory else { return nil }
        let digest = Digest(.sha256)
        func walk(_ folder: String, _ relative: String) {
            guard let names = names(in: folder) else { return }
            for name in names.sorted() {
                let path = folder + "/" + name
                let rel = relative.isEmpty ? name : relative + "/" + name
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                var line = "\(rel)\u{0}\(st.st_mode)\u{0}\(st.st_size)\u{0}\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
                if (st.st_mode & S_IFMT) == S_IFLNK {
                    var buffer = [CChar](repeating: 0, count: 4096)
                    let n = readlink(path, &buffer, buffer.count - 1)
                    if n >= 0 { line += "\u{0}" + String(cString: Array(buffer[0..<n]) + [0]) }
                }
                digest.update(Array((line + "\n").utf8))
                if (st.st_mode & S_IFMT) == S_IFDIR { walk(path, rel) }
            }
        }
        walk(root, "")
        return digest.finalizeHex()
    }
}
