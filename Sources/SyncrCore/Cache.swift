#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrDigest
import SyncrManifest

/// The cache folder: one entry per download, named by the lowercase hex MD5 of its URL (see
/// `key(for:)` for a URL that several downloads fetch), holding the partial (or complete, not
/// yet promoted) data in `<md5>.data` and its record in `<md5>.state`.
public struct Cache: Sendable {
    /// The cache folder's path, from `--cache` or the manifest's `cache:`.
    public let directory: String
    /// Whether records, and the data they vouch for, are flushed to disk before they are relied
    /// on (`fsync:`). Without it they survive a killed syncr but not a power loss.
    public let flushes: Bool
    /// The cache is in memory (tmpfs, ramfs): nothing of it survives a power loss whatever is
    /// flushed, and `fdatasync` there does nothing but cost a hand-off to a flush thread.
    let memoryBacked: Bool

    /// Creates a cache over `directory`; nothing is created until `prepare()`.
    /// - Parameter flushes: whether to flush records and data to disk (`fsync:`).
    public init(directory: String, flushes: Bool = true) {
        self.directory = directory
        self.flushes = flushes
        memoryBacked = FS.isMemoryBacked(directory)
    }

    /// Whether the cache's own files (data and records) are flushed: where it flushes, and is
    /// on a disk. Destinations on other file systems are flushed by `flushes` alone.
    var flushesFiles: Bool { flushes && !memoryBacked }

    /// Flushes a file's data to disk (`fdatasync`) where this cache flushes; returns false with
    /// `errno` set when the flush failed.
    func flush(_ fd: Int32) -> Bool {
        !flushesFiles || fdatasync(fd) == 0
    }

    /// The entry key for a URL (the expanded one: it names the resource actually fetched).
    public static func key(for url: String) -> String {
        Digest.hex(.md5, of: Array(url.utf8))
    }

    /// The entry key for a download: its URL's, or, where another download of the run fetches
    /// the same URL (`sharesURL`), the URL's with the destination, so each has its own `.data`
    /// and record. A URL fetched once keeps the key it always had.
    public static func key(for download: Download) -> String {
        download.sharesURL ? key(for: download.url.expanded + "\u{0}" + download.destination) : key(for: download.url.expanded)
    }

    /// Where the entry `key` keeps its downloaded bytes: `<directory>/<key>.data`.
    public func dataPath(_ key: String) -> String { directory + "/" + key + ".data" }
    /// Where the entry `key` keeps its record (`EntryState` as JSON): `<directory>/<key>.state`.
    public func statePath(_ key: String) -> String { directory + "/" + key + ".state" }

    /// Creates the cache folder if needed.
    public func prepare() throws(FileError) {
        try FS.makeDirectories(directory)
    }

    /// The entry's record, or nil when there is none or it cannot be read (a torn or foreign
    /// file is treated as no record: the data is then simply fetched again).
    public func loadState(_ key: String) -> EntryState? {
        guard let bytes = FS.readAll(statePath(key)), !bytes.isEmpty else { return nil }
        return EntryState(recordJSON: bytes)
    }

    /// Replaces the entry's record atomically; `durable: false` skips the flush where losing the
    /// update to a power cut costs only a second download, never a wrong file.
    public func saveState(_ state: EntryState, key: String, durable: Bool = true) throws(FileError) {
        var s = state
        s.updated = Int64(time(nil))
        try FS.writeAtomically(s.recordJSON, to: statePath(key), durable: durable && flushesFiles)
    }

    /// Writes the entry's first record, where it has none: in place, without a temporary file
    /// and a rename. A crash may tear it, and a torn record reads as none (the data is fetched
    /// again), which is what there was before. Falls back to `saveState` when a record appeared.
    func saveFirstState(_ state: EntryState, key: String) throws(FileError) {
        var s = state
        s.updated = Int64(time(nil))
        if try !FS.writeNew(s.recordJSON, to: statePath(key)) {
            try FS.writeAtomically(s.recordJSON, to: statePath(key), durable: false)
        }
    }

    /// Removes what killed runs left while zipping an upload's folder into the cache
    /// (`.<key>.zip.<random>.tmp`), once nothing has written to it for `age` seconds. `plan`
    /// zips without the cache lock, so the lock cannot tell a dead writer from a live one; the
    /// age can, since a live writer adds to its file many times a second.
    public func removeStaleTemporaries(of key: String, olderThan age: Int64 = 600) {
        guard let dir = opendir(directory) else { return }
        let prefix = "." + key + "."
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = directoryEntryName(entry)
            if name.hasPrefix(prefix) && name.hasSuffix(".tmp") { names.append(name) }
        }
        closedir(dir)
        let now = Int64(time(nil))
        for name in names {
            var st = stat()
            let path = directory + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                  now - Int64(st.st_mtim.tv_sec) >= age else { continue }
            FS.remove(path)
        }
    }

    /// Removes the record first (so no record ever vouches for missing data), then the data.
    public func discard(_ key: String) {
        FS.remove(statePath(key))
        FS.remove(dataPath(key))
    }
}
