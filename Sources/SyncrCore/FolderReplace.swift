#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import SyncrDigest

/// Folders that syncr fills as a whole (unpacked archives): built beside the destination, then
/// swapped in, in one step.
enum FolderReplace {
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
                let aside = staging + ".old"
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
        if flush { FS.syncDirectory((destination as NSString).deletingLastPathComponent) }
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
        if let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = directoryEntryName(entry)
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names { removeTree(path + "/" + name) }
        }
        rmdir(path)
    }

    /// A digest of a tree's shape: every path with its type, size, modification time, mode and
    /// link target, in sorted order. Equal digests mean nothing was added, removed or touched
    /// since; computing it costs one `lstat` per entry, no reading.
    static func fingerprint(_ root: String) -> String? {
        guard FS.kind(root) == .directory else { return nil }
        let digest = Digest(.sha256)
        func walk(_ folder: String, _ relative: String) {
            guard let dir = opendir(folder) else { return }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = directoryEntryName(entry)
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
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
