#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrDigest
import SyncrManifest

/// The cache folder: one entry per download, named by the lowercase hex MD5 of its URL (see
/// `key(for:)` for a URL that several downloads fetch), holding the partial (or complete, not
/// yet promoted) data in `<md5>.data`, and its record: in `<md5>.state` while it downloads, in
/// the folder's `records.journal` (`RecordJournal`) once it is complete.
///
/// The journal's record wins where both are there: a record file is written only while the
/// journal holds none for the entry (`save` ends the journal's first), and is removed once the
/// journal takes the entry's complete record.
public struct Cache: Sendable {
    /// The cache folder's path, from `--cache` or the manifest's `cache:`.
    public let directory: String
    /// Whether records, and the data they vouch for, are flushed to disk before they are relied
    /// on (`fsync:`). Without it they survive a killed syncr but not a power loss.
    public let flushes: Bool
    /// The cache is in memory (tmpfs, ramfs): nothing of it survives a power loss whatever is
    /// flushed, and `fdatasync` there does nothing but cost a hand-off to a flush thread.
    let memoryBacked: Bool
    /// The records of complete entries (shared by the copies of this value).
    let journal: RecordJournal

    /// Where a record went.
    enum RecordPlace {
        /// A line of the journal (a complete record); no `.state` file is left.
        case journal
        /// The entry's `.state` file.
        case stateFile
    }

    /// Creates a cache over `directory`; nothing is created until `prepare()`.
    /// - Parameter flushes: whether to flush records and data to disk (`fsync:`).
    public init(directory: String, flushes: Bool = true) {
        self.directory = directory
        self.flushes = flushes
        memoryBacked = FS.isMemoryBacked(directory)
        journal = RecordJournal(path: directory + "/" + RecordJournal.fileName, flushes: flushes && !memoryBacked)
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

    /// Folders an upload of a folder that holds them never sends: the cache folder, and its
    /// parent when that is syncr's own `.syncr` (the default `cache:`). `from: .` would
    /// otherwise send syncr's records, and a `zip: true` archive built inside the folder it
    /// zips, which then changed on every run.
    var notUploaded: [String] {
        let parent = FS.parentFolder(directory)
        return parent.hasSuffix("/.syncr") || parent == ".syncr" ? [directory, parent] : [directory]
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
    /// record is treated as no record: the data is then simply fetched again).
    public func loadState(_ key: String) -> EntryState? {
        loadState(key, stateFile: true)
    }

    /// The entry's record; `stateFile: false` when the caller knows there is no `.state` file
    /// (`CacheIndex`), which spares a failed open.
    func loadState(_ key: String, stateFile: Bool) -> EntryState? {
        if let bytes = journal.record(key) { return EntryState(recordJSON: bytes) }
        guard stateFile, let bytes = FS.readAll(statePath(key)), !bytes.isEmpty else { return nil }
        return EntryState(recordJSON: bytes)
    }

    /// Replaces the entry's record atomically; `durable: false` skips the flush where losing the
    /// update to a power cut costs only a second download, never a wrong file.
    public func saveState(_ state: EntryState, key: String, durable: Bool = true) throws(FileError) {
        _ = try save(state, key: key, durable: durable, stateFile: true)
    }

    /// Saves the entry's record: a complete one as a journal line (and its `.state` file
    /// removed), any other in the `.state` file, after the journal's record for the entry (of a
    /// version now being replaced) was ended.
    /// - Parameters:
    ///   - stateFile: whether a `.state` file may be on disk for the entry.
    ///   - first: the entry has no record at all: an unfinished one is written in place, without
    ///     a temporary file and a rename. A crash may tear it, and a torn record reads as none
    ///     (the data is fetched again), which is what there was before.
    ///   - updated: when the record is said to be written (Unix seconds); nil: now.
    ///   - mayWait: a complete record of a small file (`RecordJournal.heldFileSize`) with no
    ///     `.state` file to remove may wait in memory for the next ones (`RecordJournal`).
    /// - Returns: where the record went.
    func save(_ state: EntryState, key: String, durable: Bool, stateFile: Bool, first: Bool = false,
              updated: Int64? = nil, mayWait: Bool = false) throws(FileError) -> RecordPlace {
        var s = state
        s.updated = updated ?? Int64(time(nil))
        let bytes = s.recordJSON
        let wait = mayWait && !stateFile && (s.size ?? .max) <= RecordJournal.heldFileSize
        if s.complete, try journal.append(key, record: bytes, durable: durable && flushesFiles, mayWait: wait) {
            if stateFile { FS.remove(statePath(key)) }
            return .journal
        }
        try journal.forget(key)
        if first, try FS.writeNew(bytes, to: statePath(key)) { return .stateFile }
        try FS.writeAtomically(bytes, to: statePath(key), durable: durable && flushesFiles)
        return .stateFile
    }

    /// Removes the entry's record: the journal's ends (flushed, where the cache flushes and
    /// `durable`: before anything it vouched for may change), and the `.state` file goes.
    func forgetRecord(_ key: String, durable: Bool = true) throws(FileError) {
        try journal.forget(key, durable: durable)
        FS.remove(statePath(key))
    }

    /// Removes the upload archives killed runs left: half built (`.<key>.zip.<random>.tmp`) or
    /// built and not yet sent (`<key>.zip`; a run removes its own once the entry ends, so one
    /// that outlived its run is a killed run's), of any entry, the manifest's or one since
    /// removed from it. Each is as large as the folder it zips, and a few kills filled a small
    /// cache. Returns how many went.
    ///
    /// - Parameter age: nil when the caller holds the cache lock, before this process zips
    ///   anything: no other run writes to the cache then, so every such file is a dead run's,
    ///   whatever its age. Otherwise (a library caller without the lock) only half-built
    ///   archives untouched for this many seconds go: a live writer adds to its file many times a
    ///   second, while a built archive being sent is not written at all, and may be another
    ///   run's.
    @discardableResult
    public func removeLeftoverArchives(olderThan age: Int64? = nil) -> Int {
        guard let dir = opendir(directory) else { return 0 }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = directoryEntryName(entry)
            if CacheInventory.isHalfBuiltArchive(name) || (age == nil && CacheInventory.isUploadArchive(name)) {
                names.append(name)
            }
        }
        closedir(dir)
        let now = Int64(time(nil))
        var removed = 0
        for name in names {
            var st = stat()
            let path = directory + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                  age.map({ now - Int64(st.st_mtim.tv_sec) >= $0 }) ?? true else { continue }
            FS.remove(path)
            removed += 1
        }
        return removed
    }

    /// Removes the record first (so no record ever vouches for missing data), then the data.
    /// - Throws: `FileError` when the journal cannot take the end of the record; the data is
    ///   then left as the record describes it.
    public func discard(_ key: String) throws(FileError) {
        try forgetRecord(key)
        FS.remove(dataPath(key))
    }

    /// `discard(_:)` for a download about to take the entry's name again: the journal's
    /// tombstone is flushed on `flusher`'s threads (where the cache flushes), off Swift's pool,
    /// and together with the other entries' flushes.
    func discard(_ key: String, flusher: FlushPool) async throws {
        if let line = try journal.forget(key, durable: false), let ticket = journal.flushTicket(upTo: line) {
            defer { close(ticket.fd) }
            try await flusher.flush(fd: ticket.fd, path: journal.path)
            journal.flushed(ticket.covers)
        }
        FS.remove(statePath(key))
        FS.remove(dataPath(key))
    }

    /// Flushes the journal's lines written without a flush, and rewrites it when mostly dead:
    /// the end of a run that wrote records (the caller holds the cache lock).
    /// - Throws: `FileError` when the flush failed: the run's records may not survive a power cut.
    public func finishRecords() throws(FileError) {
        try journal.flush()
        journal.compactIfWorthIt()
    }
}
