#if canImport(Glibc)
import Glibc
#endif

/// What an archive may unpack to. These refuse zip bombs and nothing else: the readers already
/// refuse entries whose data exceeds their declared size and overlapping entries, so what is
/// left is a total that would not fit where it goes.
///
/// There is no compression-ratio rule by default: deflate reaches about 1030:1 on runs of
/// zeros, so disk images, sparse data files and zero-padded binaries reach any ratio a bomb does.
public struct ExtractionLimits: Sendable, Equatable {
    /// Entries at most.
    public var maxEntries: Int
    /// Bytes written at most, over all entries; nil: only the free space limits the total.
    public var maxTotalBytes: Int64?
    /// What sets `maxTotalBytes` (`max_unpacked_size`, `--max-unpacked-size`), and how to
    /// raise it, for the message of a refusal.
    public var maxTotalBytesSetting: String
    public var maxTotalBytesRaise: String
    /// What sets the leading components stripped from each name (`strip_components` in a
    /// manifest, `--strip-components` for `syncr unzip`), for the messages that tell a user
    /// to change it. It travels with the limits, as `maxTotalBytesSetting` does, because they
    /// reach every reader and the target.
    public var stripComponentsSetting: String
    /// Whether the total must fit in the free space of the staging folder's file system.
    public var checkFreeSpace: Bool
    /// Uncompressed bytes per compressed byte at most, for an entry larger than `ratioFloor`;
    /// nil (the default): no ratio rule. For callers that know their data (the fuzzers).
    public var maxRatio: Int64?
    /// Entries smaller than this are not held to `maxRatio`.
    public var ratioFloor: Int64
    /// Bytes of entry names at most, over all entries: every name is kept while unpacking (to
    /// refuse duplicates, and to set folder modes at the end), and a tar.gz of 28 bytes per
    /// entry compressed could otherwise make a million names of 4 KiB, gigabytes in memory.
    public var maxNameBytes: Int

    public init(maxEntries: Int = 1_000_000, maxTotalBytes: Int64? = nil,
                maxTotalBytesSetting: String = "the size limit", maxTotalBytesRaise: String = "raise the size limit",
                stripComponentsSetting: String = "strip_components", checkFreeSpace: Bool = true,
                maxRatio: Int64? = nil, ratioFloor: Int64 = 1 << 20, maxNameBytes: Int = 256 << 20) {
        self.maxNameBytes = maxNameBytes
        self.maxEntries = maxEntries
        self.maxTotalBytes = maxTotalBytes
        self.maxTotalBytesSetting = maxTotalBytesSetting
        self.maxTotalBytesRaise = maxTotalBytesRaise
        self.stripComponentsSetting = stripComponentsSetting
        self.checkFreeSpace = checkFreeSpace
        self.maxRatio = maxRatio
        self.ratioFloor = ratioFloor
    }
}

/// Writes an archive's entries into a staging folder that syncr just created, and refuses
/// anything that would land outside it.
///
/// No entry is ever written through a symbolic link: every parent folder is checked with
/// `lstat` (or created) component by component, and files are created with
/// `O_EXCL | O_NOFOLLOW`, which also catches duplicate names. Permission bits are kept less the
/// umask; setuid, setgid and sticky are dropped. Not thread-safe: one extraction, one task.
public final class ExtractionTarget {
    public let root: String
    /// The archive's name, for messages.
    public let archive: String
    public let limits: ExtractionLimits

    private var entries = 0
    private var totalBytes: Int64 = 0
    /// Free bytes on the staging folder's file system when extraction started (nil: not checked).
    private let freeBytes: Int64?
    /// The names extracted so far, as bytes: the file system tells names apart by their bytes,
    /// while Swift's `String` equality would take `café` composed and decomposed for one name
    /// and refuse a valid archive holding both.
    private var seen: Set<[UInt8]> = []
    /// How the entry each name came from spells it, where it spells it otherwise (`./a.txt`,
    /// or `v1/a.txt` with one component stripped): a second entry of that name is refused
    /// naming both. Names spelled as they are stored cost nothing here; the others, in the
    /// usual archives (every entry of a `./` tar, of a stripped GitHub tarball), only a slot:
    /// the part before the name is kept once (`prefixes`) and shared.
    private var spelledOtherwise: [[UInt8]: Spelling] = [:]
    /// Each part kept before names (`./`, `v1/`), once, by its bytes.
    private var prefixes: [[UInt8]: String] = [:]

    /// How an entry spelled a name.
    private enum Spelling {
        /// This, then the name (and `/` for a folder).
        case prefixed(String)
        /// Otherwise (`a//b` for `a/b`): the whole entry.
        case whole(String)
    }
    private var nameBytes = 0
    /// Folder modes to apply at the end, so a read-only folder can still be filled first.
    private var folderModes: [(path: String, mode: mode_t)] = []

    /// - Parameter root: an existing, empty folder.
    public init(root: String, archive: String, limits: ExtractionLimits = ExtractionLimits()) {
        self.root = root
        self.archive = archive
        self.limits = limits
        freeBytes = limits.checkFreeSpace ? Self.available(root) : nil
    }

    /// Refuses, before anything is written, a total the archive declares that would not fit:
    /// a zip's whole total from its central directory (`entry` nil), or a tar entry's size from
    /// its header on top of what came before.
    public func reserve(_ declared: Int64, entry: String? = nil) throws(ArchiveError) {
        let (total, overflow) = totalBytes.addingReportingOverflow(max(declared, 0))
        let size = Self.text(overflow ? .max : total)
        try check(overflow ? .max : total, entry: entry,
                  amount: entry == nil ? "unpacks to \(size)," : "unpacks to at least \(size),")
    }

    /// The total against the explicit limit and the free space.
    /// - Parameter amount: how the message puts the total (`unpacks to 64.0 MiB,`).
    private func check(_ total: Int64, entry: String?, amount: String = "unpacks to") throws(ArchiveError) {
        if let limit = limits.maxTotalBytes, total > limit {
            throw .limit(archive: archive, entry: entry,
                         detail: "the archive \(amount) more than the \(Self.text(limit)) that \(limits.maxTotalBytesSetting) allows; \(limits.maxTotalBytesRaise) to unpack it")
        }
        if let free = freeBytes, total > free {
            // The staging folder is beside the destination: name the folder they share.
            let folder = root.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            throw .limit(archive: archive, entry: entry,
                         detail: "the archive \(amount) more than the \(Self.text(free)) free on the file system of \(folder.isEmpty ? "/" : folder); make room there and run again")
        }
    }

    /// Bytes an unprivileged writer may still use on `folder`'s file system, if `statvfs` tells.
    static func available(_ folder: String) -> Int64? {
        var vfs = statvfs()
        guard statvfs(folder, &vfs) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: vfs.f_bavail).multipliedReportingOverflow(by: Int64(clamping: vfs.f_frsize))
        return overflow ? .max : bytes
    }

    /// `67108864 bytes (64.0 MiB)`: exact, and readable.
    static func text(_ bytes: Int64) -> String {
        guard bytes >= 1024 else { return "\(bytes) bytes" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(bytes) bytes (\(tenths / 10).\(tenths % 10) \(units[unit]))"
    }

    /// Why creating `path` for `entry` failed. A path too long for the system names the entry
    /// and what to do (the full path, staging folder and all, was 4 KiB of message); other
    /// errors stay `.io`, which callers tell a full disk by.
    private func creationFailure(_ path: String, entry: String, errno code: Int32, doing: String) -> ArchiveError {
        guard code == ENAMETOOLONG else {
            return .io(path: path, errno: code, detail: "\(doing): \(String(cString: strerror(code)))")
        }
        let what = doing.hasSuffix("link") ? "the path, or the link's target," : "the path"
        return .unsupported(archive: archive, entry: entry,
                            detail: "\(what) is longer than this system allows for one file (\(PATH_MAX) bytes, with the destination folder's path); unpack into a folder with a shorter path, or set \(limits.stripComponentsSetting)")
    }

    /// Counts an entry against the limits and refuses a name seen before.
    private func admit(_ components: [String], entry: String) throws(ArchiveError) -> String {
        let key = components.joined(separator: "/")
        try count(key)
        let bytes = Array(key.utf8)
        guard seen.insert(bytes).inserted else { throw duplicate(key, entry: entry) }
        if !Self.spells(entry, key) { spelledOtherwise[bytes] = try spelling(of: entry, key: key) }
        return key
    }

    /// How `entry` spells `key`: the part before it, kept once however many entries share it,
    /// or the whole entry. What is kept anew is counted: a long first folder copied for every
    /// short name under it would keep gigabytes the names' total never saw.
    private func spelling(of entry: String, key: String) throws(ArchiveError) -> Spelling {
        let stored = entry.utf8.last == UInt8(ascii: "/") ? entry.utf8.dropLast() : entry.utf8[...]
        guard stored.count > key.utf8.count, stored.suffix(key.utf8.count).elementsEqual(key.utf8) else {
            try keep(nameBytes: entry.utf8.count)
            return .whole(entry)
        }
        let bytes = Array(stored.dropLast(key.utf8.count))
        if let shared = prefixes[bytes] { return .prefixed(shared) }
        try keep(nameBytes: bytes.count)
        let prefix = String(decoding: bytes, as: UTF8.self)
        prefixes[bytes] = prefix
        return .prefixed(prefix)
    }

    /// Whether an entry's stored name is `key` (a folder's with its trailing `/`).
    private static func spells(_ entry: String, _ key: String) -> Bool {
        let stored = entry.utf8.last == UInt8(ascii: "/") ? entry.utf8.dropLast() : entry.utf8[...]
        return stored.elementsEqual(key.utf8)
    }

    /// The refusal of `entry`, whose name `key` an earlier entry took: naming that entry too
    /// when it was stored under another name, and the stripping setting when that is what made
    /// the two one (`v1/a.txt` and `v2/a.txt`, both `a.txt` once one component is stripped).
    private func duplicate(_ key: String, entry: String) -> ArchiveError {
        let first = switch spelledOtherwise[Array(key.utf8)] {
        case .prefixed(let prefix)?: prefix + key
        case .whole(let entry)?: entry
        case nil: key
        }
        guard !first.utf8.elementsEqual(entry.utf8) else { return .duplicate(archive: archive, entry: entry) }
        let stripped = (try? SafePath.components(first)) != (try? SafePath.components(entry))
        return .duplicate(archive: archive, entry: entry, first: first, name: key,
                          strippedBy: stripped ? limits.stripComponentsSetting : nil)
    }

    /// Counts an entry, and its name's bytes, against the limits: every entry read, also one
    /// left out (by `strip_components`, a repeated folder), whose name the caller may keep.
    public func count(_ name: String) throws(ArchiveError) {
        entries += 1
        if entries > limits.maxEntries {
            throw .limit(archive: archive, entry: nil, detail: "more than \(limits.maxEntries) entries")
        }
        try keep(nameBytes: name.utf8.count)
    }

    /// Counts bytes of a name kept in memory against `maxNameBytes`.
    private func keep(nameBytes count: Int) throws(ArchiveError) {
        nameBytes += count
        if nameBytes > limits.maxNameBytes {
            throw .limit(archive: archive, entry: nil,
                         detail: "the entries' names add up to more than \(Self.text(Int64(limits.maxNameBytes))), which this "
                            + "archive's size does not need: it is built to fill memory")
        }
    }

    /// Makes sure every folder above `components` exists as a real folder (not a link), creating
    /// what is missing. Returns the full path of the entry.
    private func parentPath(_ components: [String], entry: String) throws(ArchiveError) -> String {
        var path = root
        for part in components.dropLast() {
            path += "/" + part
            var st = stat()
            if lstat(path, &st) == 0 {
                switch st.st_mode & S_IFMT {
                case S_IFDIR: continue
                case S_IFLNK:
                    throw .unsafePath(archive: archive, entry: entry,
                                      detail: "it would be written through the symbolic link \(path.dropFirst(root.count + 1))")
                default:
                    throw .unsafePath(archive: archive, entry: entry,
                                      detail: "\(path.dropFirst(root.count + 1)) is a file, not a folder")
                }
            }
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw creationFailure(path, entry: entry, errno: errno, doing: "cannot create the folder")
            }
        }
        return root + "/" + components.joined(separator: "/")
    }

    /// A folder entry.
    public func directory(_ components: [String], mode: mode_t, entry: String) throws(ArchiveError) {
        // A folder entry repeated (`tar -cf x.tar d d/sub` stores `d/sub` twice) is harmless,
        // and GNU tar takes it: a name seen before that is a real folder on disk was one.
        let key = components.joined(separator: "/")
        var made = stat()
        if seen.contains(Array(key.utf8)), lstat(root + "/" + key, &made) == 0, (made.st_mode & S_IFMT) == S_IFDIR {
            try count(entry)
            return
        }
        _ = try admit(components, entry: entry)
        let path = try parentPath(components, entry: entry)
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw .unsafePath(archive: archive, entry: entry, detail: "a non-folder already stands at this name")
            }
        } else if mkdir(path, 0o755) != 0 {
            throw creationFailure(path, entry: entry, errno: errno, doing: "cannot create the folder")
        }
        folderModes.append((path, Self.safeMode(mode, folder: true)))
    }

    /// A regular file entry; write its bytes through the returned writer, then `close` it.
    /// - Parameter compressedSize: the entry's stored size, for the ratio limit (nil: unknown).
    public func file(_ components: [String], mode: mode_t, entry: String,
                     compressedSize: Int64? = nil) throws(ArchiveError) -> EntryWriter {
        _ = try admit(components, entry: entry)
        let path = try parentPath(components, entry: entry)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw .duplicate(archive: archive, entry: entry) }
            throw creationFailure(path, entry: entry, errno: errno, doing: "cannot create")
        }
        return EntryWriter(target: self, fd: fd, path: path, entry: entry,
                           mode: Self.safeMode(mode, folder: false), compressedSize: compressedSize)
    }

    /// A symbolic link entry; refused when its target leaves the destination.
    public func symlink(_ components: [String], target: String, entry: String) throws(ArchiveError) {
        _ = try admit(components, entry: entry)
        if let problem = SafePath.linkProblem(linkComponents: components, target: target) {
            throw .unsafePath(archive: archive, entry: entry, detail: problem.detail(target: target, place: "the destination"))
        }
        let path = try parentPath(components, entry: entry)
        if Glibc.symlink(target, path) != 0 {
            if errno == EEXIST { throw .duplicate(archive: archive, entry: entry) }
            throw creationFailure(path, entry: entry, errno: errno, doing: "cannot create the link")
        }
    }

    /// A hard link entry (tar): a second name for a file extracted before.
    public func hardLink(_ components: [String], to existing: [String], entry: String) throws(ArchiveError) {
        _ = try admit(components, entry: entry)
        let source = root + "/" + existing.joined(separator: "/")
        var st = stat()
        guard seen.contains(Array(existing.joined(separator: "/").utf8)), lstat(source, &st) == 0,
              (st.st_mode & S_IFMT) == S_IFREG else {
            throw .unsafePath(archive: archive, entry: entry,
                              detail: "a hard link must name a file extracted before it (\(existing.joined(separator: "/")))")
        }
        let path = try parentPath(components, entry: entry)
        if link(source, path) != 0 {
            throw creationFailure(path, entry: entry, errno: errno, doing: "cannot create the link")
        }
    }

    /// Applies folder permissions, deepest first. Call once, after the last entry.
    public func finish() {
        for (path, mode) in folderModes.sorted(by: { $0.path.count > $1.path.count }) {
            chmod(path, mode)
        }
        folderModes = []
    }

    fileprivate func count(_ bytes: Int64, entry: String) throws(ArchiveError) {
        // Checked with every piece of data: a cancelled task stops within one piece.
        if Task.isCancelled { throw .interrupted(path: archive) }
        totalBytes += bytes
        try check(totalBytes, entry: entry)
    }

    /// Permission bits to keep: the archive's rwx bits less the process's umask (as for any file
    /// syncr creates), never setuid, setgid or sticky; the owner can always read (and enter)
    /// what was unpacked.
    static func safeMode(_ mode: mode_t, folder: Bool, umask: mode_t = ExtractionTarget.umask) -> mode_t {
        (mode & 0o777 & ~umask) | (folder ? 0o700 : 0o600)
    }

    /// The process's file mode creation mask, read once from `/proc/self/status` (`umask(2)` can
    /// only be read by setting it, which races with other threads creating files). 022 when it
    /// cannot be read.
    public static let umask: mode_t = {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0o022 }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Umask:") {
            let digits = line.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }
            if let value = mode_t(String(digits), radix: 8) { return value & 0o777 }
        }
        return 0o022
    }()
}

/// Writes one file entry's bytes, counting them against the limits.
public final class EntryWriter {
    private let target: ExtractionTarget
    private var fd: Int32
    public let path: String
    public let entry: String
    private let mode: mode_t
    private let compressedSize: Int64?
    public private(set) var written: Int64 = 0

    fileprivate init(target: ExtractionTarget, fd: Int32, path: String, entry: String, mode: mode_t, compressedSize: Int64?) {
        self.target = target
        self.fd = fd
        self.path = path
        self.entry = entry
        self.mode = mode
        self.compressedSize = compressedSize
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) {
        guard var base = bytes.baseAddress, bytes.count > 0 else { return }
        written += Int64(bytes.count)
        try target.count(Int64(bytes.count), entry: entry)
        let limits = target.limits
        // An archive can claim any compressed size: multiply without trapping on overflow.
        if let compressed = compressedSize, let ratio = limits.maxRatio, written > limits.ratioFloor,
           case let (allowed, overflow) = max(compressed, 1).multipliedReportingOverflow(by: ratio),
           !overflow, written > allowed {
            throw .limit(archive: target.archive, entry: entry,
                         detail: "it expands more than \(ratio) times its stored size")
        }
        var remaining = bytes.count
        while remaining > 0 {
            let n = Glibc.write(fd, base, remaining)
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, errno: errno, detail: "cannot write: \(String(cString: strerror(errno)))")
            }
            base += n
            remaining -= n
        }
    }

    /// Sets the permissions (and modification time, when given) and closes the file.
    public func close(modificationTime: Int64? = nil) throws(ArchiveError) {
        guard fd >= 0 else { return }
        fchmod(fd, mode)
        if let modificationTime {
            var times = [timespec(tv_sec: Int(modificationTime), tv_nsec: 0),
                         timespec(tv_sec: Int(modificationTime), tv_nsec: 0)]
            futimens(fd, &times)
        }
        let result = Glibc.close(fd)
        fd = -1
        if result != 0 {
            throw .io(path: path, errno: errno, detail: "cannot finish writing: \(String(cString: strerror(errno)))")
        }
    }
}
