#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import SyncrHTTP
import SyncrLock

/// An error from a local file operation, naming the path and what to do.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or folder the operation was on, as given.
    public var path: String
    /// What was attempted, as a verb phrase for the message ("remove", "move the finished file into place").
    public var operation: String
    /// The `errno` the system call failed with.
    public var errno: Int32

    /// Creates an error from its parts; read `errno` right after the failing call.
    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    /// `<path>: cannot <operation>: <strerror>`, with a hint for a full disk, missing permissions
    /// or a read-only file system.
    public var description: String {
        var text = "\(path): cannot \(operation): \(String(cString: strerror(errno)))"
        switch errno {
        case ENOSPC: text += " (free some space and run again: what was downloaded so far is kept)"
        case EACCES, EPERM: text += " (check the permissions of the folder)"
        case EROFS: text += " (the file system is read-only)"
        default: break
        }
        return text
    }
}

/// Identifies one version of a file cheaply (defined beside the request bodies that are held
/// to one: `RequestBody.fileRange(since:)`).
public typealias FileFingerprint = SyncrHTTP.FileFingerprint

/// Small, explicit POSIX file operations: each says what it does to durability.
enum FS {
    enum Kind { case missing, file, directory, other }

    /// - Parameter followingLinks: the kind of what a symbolic link points to (a link to nothing
    ///   is `.missing`), as for a path the user names on the command line.
    static func kind(_ path: String, followingLinks: Bool = false) -> Kind {
        var st = stat()
        guard (followingLinks ? stat(path, &st) : lstat(path, &st)) == 0 else { return .missing }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Whether `path` is a folder, a link to one included, as `mkdir -p` takes it: a manifest
    /// reached through a linked folder (`current -> releases/42`), or a destination under one,
    /// is written through the link.
    static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// The kind of `path` (not following a symbolic link) and, for a regular file, its
    /// fingerprint: `kind` and `fingerprint` in one `lstat` (for a regular file `lstat` and
    /// `stat` agree).
    static func kindAndFingerprint(_ path: String) -> (Kind, FileFingerprint?) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return (.missing, nil) }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return (.file, fingerprint(st))
        case S_IFDIR: return (.directory, nil)
        default: return (.other, nil)
        }
    }

    private static func fingerprint(_ st: stat) -> FileFingerprint {
        FileFingerprint(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                        mtimeNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    static func fingerprint(_ path: String) -> FileFingerprint? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return fingerprint(st)
    }

    /// The fingerprint of an open file (`fstat`: no path lookup).
    static func fingerprint(fd: Int32) -> FileFingerprint? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return fingerprint(st)
    }

    static func fileSize(_ path: String) -> Int64? { fingerprint(path)?.size }

    /// The folder `path` is in, as `NSString.deletingLastPathComponent` gives it ("" for a
    /// name with no folder, "/" for one at the root), found on the bytes: Foundation's version
    /// cost more than a system call per entry, and traps on a one-letter relative name (`c`,
    /// `c/`).
    static func parentFolder(_ path: String) -> String {
        var path = path
        // In place on the string's bytes: every entry asks, and a copy of them cost a malloc.
        return path.withUTF8 { bytes -> String in
            let slash = UInt8(ascii: "/")
            // The end of the last name (trailing slashes are not one), then the slashes before it.
            var end = bytes.count
            while end > 1, bytes[end - 1] == slash { end -= 1 }
            guard let last = bytes[..<end].lastIndex(of: slash) else { return "" }
            var cut = last
            while cut > 0, bytes[cut - 1] == slash { cut -= 1 }
            return cut == 0 ? "/" : String(decoding: UnsafeBufferPointer(rebasing: bytes[..<cut]), as: UTF8.self)
        }
    }

    /// Creates a folder and its parents (like `mkdir -p`).
    static func makeDirectories(_ path: String) throws(FileError) {
        if isFolder(path) { return }
        let parent = parentFolder(path)
        if !parent.isEmpty && parent != path && parent != "/" { try makeDirectories(parent) }
        if mkdir(path, 0o777) != 0 && errno != EEXIST {
            throw FileError(path: path, operation: "create the folder", errno: errno)
        }
        if !isFolder(path) {
            throw FileError(path: path, operation: "create the folder (\(inTheWay(path)))", errno: ENOTDIR)
        }
    }

    /// What stands at `path` where a folder must be, named as it is: a link to nothing (mkdir
    /// does not follow it) is not a file.
    static func inTheWay(_ path: String) -> String {
        var st = stat()
        let link = lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
        return !link ? "a file is in the way"
            : stat(path, &st) == 0 ? "a symbolic link to a file is in the way" : "a symbolic link to nothing is in the way"
    }

    /// Whether `path` (or, while it does not exist, the nearest folder above it) is on a file
    /// system kept in memory only: tmpfs (`/dev/shm`, often `/tmp` and CI runners' work folders)
    /// or ramfs.
    static func isMemoryBacked(_ path: String) -> Bool {
        let tmpfsMagic = 0x0102_1994, ramfsMagic = 0x8584_58f6
        var current = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        while true {
            let type = syncr_filesystem_type(current)
            if type >= 0 { return [tmpfsMagic, ramfsMagic].contains(type) }
            guard errno == ENOENT || errno == ENOTDIR else { return false }
            let parent = parentFolder(current)
            guard !parent.isEmpty, parent != current else { return false }
            current = parent
        }
    }

    /// The name of the kernel's pseudo file system `path` is on, where no regular file can be
    /// created (by root neither: `/proc` answers ENOENT, `/sys` EACCES); nil for any other, and
    /// when it cannot be told. Magic numbers from linux/magic.h.
    static func pseudoFileSystem(_ path: String) -> String? {
        let names: [Int: String] = [0x9fa0: "proc", 0x6265_6572: "sysfs", 0x0027_e0eb: "cgroup",
                                    0x6367_7270: "cgroup2", 0x1cd1: "devpts"]
        return names[syncr_filesystem_type(path)]
    }

    /// Flushes a folder's entries (renames, creations) to disk.
    /// Returns what went wrong, except where there was nothing to flush: a folder removed
    /// meanwhile, or a file system without flushes (EINVAL: some FUSE and special ones).
    @discardableResult
    static func syncDirectory(_ path: String) -> FileError? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? nil : FileError(path: path, operation: "open the folder", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { return errno == EINVAL ? nil : FileError(path: path, operation: "flush the folder", errno: errno) }
        return nil
    }

    /// Writes bytes to a new file at `path` (it must not exist): no temporary name and no
    /// rename, for a file that nothing else relies on yet. A crash may leave it torn, so only for
    /// files whose reader takes a torn one as absent (records do). Returns false, writing
    /// nothing, when something is already at `path`.
    static func writeNew(_ bytes: [UInt8], to path: String) throws(FileError) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EEXIST { return false }
            throw FileError(path: path, operation: "create", errno: errno)
        }
        try writeAll(bytes, to: fd, path: path)
        close(fd)
        return true
    }

    /// Writes bytes to `path` so that a reader sees either the old file or the whole new one:
    /// write a temporary file beside it, flush it (when `durable`), rename it over. Without the
    /// flush a power loss may bring back the previous version, never a torn one.
    static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool = true) throws(FileError) {
        let temp = path + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(path: temp, operation: "create", errno: errno) }
        try writeAll(bytes, to: fd, path: temp)
        if durable && fdatasync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temp)
            throw FileError(path: temp, operation: "flush", errno: code)
        }
        close(fd)
        if rename(temp, path) != 0 {
            let code = errno
            unlink(temp)
            throw FileError(path: path, operation: "replace", errno: code)
        }
    }

    /// Writes all of `bytes` to the file just created at `path`; on failure closes and removes it.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(FileError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(path)
                throw FileError(path: path, operation: "write", errno: code)
            }
            offset += n
        }
    }

    static func readAll(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A record is a few hundred bytes: one read into a small array finds its end (a regular
        // file's read comes back short only at its end), sparing an fstat and a read of 0.
        var failed = false
        let small = [UInt8](unsafeUninitializedCapacity: 4096) { buffer, count in
            var n: Int
            repeat { n = read(fd, buffer.baseAddress, buffer.count) } while n < 0 && errno == EINTR
            failed = n < 0
            count = max(0, n)
        }
        if failed { return nil }
        if small.count < 4096 { return small.count <= limit ? small : Array(small.prefix(limit)) }
        guard lseek(fd, 0, SEEK_SET) == 0 else { return nil }
        // Larger: read straight into an array of the file's size (a zeroed 64 KiB buffer per
        // read cost more than the read).
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size < limit {
            let size = Int(st.st_size)
            var out = [UInt8](repeating: 0, count: size + 1)
            var filled = 0
            while filled <= size {
                let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, size + 1 - filled) }
                if n < 0 { if errno == EINTR { continue }; return nil }
                if n == 0 { break }
                filled += n
            }
            // One byte more than `fstat` said is room to notice a file that grew meanwhile;
            // then it is read the general way below.
            if filled <= size {
                out.removeLast(out.count - filled)
                return out
            }
            guard lseek(fd, 0, SEEK_SET) == 0 else { return nil }
        }
        var out: [UInt8] = []
        // Sized by the file (a record is a few hundred bytes): a 64 KiB buffer zeroed for each
        // of 100,000 records was a tenth of a locked plan.
        let size = st.st_size > 0 ? Int(clamping: st.st_size) : 64 * 1024
        var buffer = [UInt8](repeating: 0, count: max(1, min(64 * 1024, size + 1)))
        while out.count < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    /// The lowercase hex digests of a file, read once in 1 MiB blocks. Stops with `ECANCELED`
    /// once `Cancellation.isRequested`.
    static func digests(of path: String, algorithms: [String]) throws(FileError) -> [String: String] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        let hashers = algorithms.map { DigestBox(algorithm: $0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            // A run stopped by a signal must not wait for the rest of a large file.
            if Cancellation.isRequested { throw FileError(path: path, operation: "read", errno: ECANCELED) }
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            for h in hashers { h.digest.update(chunk) }
        }
        var result: [String: String] = [:]
        for h in hashers { result[h.name] = h.digest.finalizeHex() }
        return result
    }
}

import SyncrDigest

private final class DigestBox {
    let name: String
    let digest: Digest
    init(algorithm: String) {
        name = algorithm
        digest = Digest(algorithm == "md5" ? .md5 : .sha256)
    }
}

extension FS {
    /// Copies a file in 1 MiB blocks and flushes the copy (unless `flush` is false); keeps the
    /// source's permission bits.
    static func copy(_ source: String, to target: String, flush: Bool = true) throws(FileError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileError(path: source, operation: "open", errno: errno) }
        defer { close(input) }
        var st = stat()
        fstat(input, &st)
        let output = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0o777)
        guard output >= 0 else { throw FileError(path: target, operation: "create", errno: errno) }
        defer { close(output) }
        // The source's mode exactly: open's mode passes through the umask, and a replaced
        // destination keeps the mode it had (0664 must not become 0644).
        guard fchmod(output, st.st_mode & 0o777) == 0 else {
            throw FileError(path: target, operation: "chmod", errno: errno)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer.baseAddress, buffer.count)
            if n < 0 { if errno == EINTR { continue }; throw FileError(path: source, operation: "read", errno: errno) }
            if n == 0 { break }
            var done = 0
            while done < n {
                let w = write(output, buffer.baseAddress! + done, n - done)
                if w < 0 { if errno == EINTR { continue }; throw FileError(path: target, operation: "write", errno: errno) }
                done += w
            }
        }
        if flush && fdatasync(output) != 0 { throw FileError(path: target, operation: "flush", errno: errno) }
    }
}
