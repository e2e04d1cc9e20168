#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SyncrLock

/// The records of finished entries, one cache file for all of them: `records.journal`, a header
/// line and then one `JournalLine` per record written, appended one after another.
///
/// A record file per entry cost, for each small file downloaded, a file created, written and
/// closed (on ext4 an inode and a journal entry: half the time of a 16 KiB download), and for
/// each entry of a no-op run a file opened and read. Here a finished entry costs one `pwrite`
/// to a descriptor already open, and a run reads every record in one pass. Entries still
/// downloading keep their `<key>.state` file (`Cache`), which checkpoints replace many times.
///
/// - The last line for a key is its record; a tombstone (an empty record) says there is none.
/// - A line torn by a crash, or anything that fails its length or checksum, reads as no line,
///   and ends the record of its key where the key is legible (it may have been a tombstone).
///   The next append ends a torn last line with a newline first, so that it cannot swallow the
///   new line and stays what it is.
/// - Only one process writes: `apply` and `cache prune` hold the cache lock. Readers without
///   it (`plan`) may see an append half done; it reads as torn.
/// - Lines are written without a flush of their own unless asked (`durable`, or a
///   `flushTicket` flushed elsewhere), and flushed together at the end of a run (`flush`): a
///   line lost to a power cut costs a download again, as a lost record file did; it never
///   vouches for anything untrue.
/// - The record of a small finished file may wait in memory (`append(mayWait:)`) and go with
///   the next ones in one `pwrite`: once `heldLines` wait, or the first has waited `heldTime`
///   (a timer sees to it), or anything else touches the journal, or the run ends. A run killed
///   meanwhile (SIGKILL, or a second signal's immediate exit) loses those records, which costs
///   the next run those small downloads again (at most `heldLines` of `heldFileSize`), never a
///   wrong file; one `pwrite` and one `fstat` per small file were a tenth of the CPU of 2,000
///   of them.
/// - Rewritten without its dead lines (replaced, forgotten, damaged) once those outnumber the
///   live ones (`compactIfWorthIt`), into a new file renamed over the old one.
/// - A journal of another format (a later syncr's) is left alone: records then stay in
///   `.state` files, as before there was a journal.
final class RecordJournal: Sendable {
    /// The journal's name in the cache folder.
    static let fileName = "records.journal"
    /// The first line: the format, so that a later one can change it.
    static let header = Array("syncr-records 1\n".utf8)
    /// Compaction waits for at least this many dead lines: rewriting a small journal buys nothing.
    static let compactionFloor = 1024
    /// How many records may wait in memory, for how long, and of files up to which size.
    static let heldLines = 64
    static let heldTime: Duration = .seconds(1)
    static let heldFileSize: Int64 = 256 << 10

    /// Where the journal is: `<cache>/records.journal`.
    let path: String
    /// Whether `durable` appends and `flush` reach the disk (`Cache.flushesFiles`).
    private let flushes: Bool
    private let file: Locked<JournalFile>

    init(path: String, flushes: Bool) {
        self.path = path
        self.flushes = flushes
        file = Locked(JournalFile())
    }

    deinit {
        file.withLock { [path] f in
            try? f.writeHeld(path)
            f.close()
        }
    }

    /// The record `key` has in the journal (its JSON), or nil (none, or the journal cannot be
    /// read: then writing fails, naming it). Read outside the lock: every entry of a no-op run
    /// asks at once, and 16 of them queued for one `pread` each.
    func record(_ key: String) -> [UInt8]? {
        guard let k = CacheKey(hex: key.utf8) else { return nil }
        let found = file.withLock { f in
            f.loadOnce(path)
            return f.find(k)
        }
        return found?.read()
    }

    /// Every key with a record in the journal.
    func keys() -> [String] {
        file.withLock { f in
            f.loadOnce(path)
            try? f.writeHeld(path)
            // Lines that could not be written are still records.
            return Set(f.slots.keys).union(f.held.map(\.key)).map(\.hex)
        }
    }

    /// Appends `record` (JSON) as `key`'s record, flushed first when `durable`.
    /// - Parameter mayWait: the line may wait in memory for the next ones (see above); only
    ///   for a record that is not `durable` and replaces no `.state` file.
    /// - Returns: false when the journal is of another format and takes no record.
    /// - Throws: `FileError` naming the journal when it cannot be read, created, written or
    ///   flushed.
    func append(_ key: String, record: [UInt8], durable: Bool, mayWait: Bool = false) throws(FileError) -> Bool {
        guard let k = CacheKey(hex: key.utf8) else { return false }
        let line = JournalLine.encode(key: key, record: record)
        let (number, wait) = try file.withLock { f throws(FileError) -> (UInt64?, Duration?) in
            guard mayWait && !durable else {
                return (try f.append(line, key: k, recordLength: record.count, path: path), nil)
            }
            let first = f.held.isEmpty
            let number = try f.hold(line, key: k, recordLength: record.count, path: path)
            return (number, first && !f.held.isEmpty ? f.heldTime : nil)
        }
        if let wait { writeHeld(after: wait) }
        guard let number else { return false }
        if durable { try flush(upTo: number) }
        return true
    }

    /// Writes the held lines once the first of them has waited `time`, should no later line or
    /// other use of the journal write them first: a run whose last small files are followed by
    /// a long download, or by uploads, would otherwise keep their records in memory until it
    /// ends, and lose them to a SIGKILL meanwhile. Set when a line is held while none is. A
    /// write that fails here leaves the lines held (the next write tries them again, and the
    /// end of the run reports them).
    private func writeHeld(after time: Duration) {
        let (seconds, attoseconds) = time.components
        // A few milliseconds late, so that the lines have surely waited their time by then.
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000) + 5_000_000
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self else { return }
            file.withLock { f in
                guard let since = f.heldSince, ContinuousClock.now - since >= f.heldTime else { return }
                try? f.writeHeld(path)
            }
        }
    }

    /// Lets lines wait up to `time` instead of `heldTime`: a test keeps them held across a
    /// loaded machine's pauses.
    func holdLines(for time: Duration) {
        file.withLock { $0.heldTime = time }
    }

    /// Ends `key`'s record, where the journal has one, with a tombstone; flushed (when the
    /// cache flushes and `durable`) before this returns.
    ///
    /// The flush matters where new data takes the old data's name: a lost tombstone would bring
    /// back a complete record beside a partial file of the same size, which the next plan would
    /// take as the finished file. (A `.state` file's removal needed no flush: ext4 orders it
    /// before the new file's creation; a line in a file it does not.) A caller on Swift's pool
    /// passes `durable: false` and flushes the returned line with `flushTicket` on the flush
    /// threads instead.
    /// - Returns: the tombstone's line number, nil when none was needed.
    @discardableResult
    func forget(_ key: String, durable: Bool = true) throws(FileError) -> UInt64? {
        guard let k = CacheKey(hex: key.utf8) else { return nil }
        let number = try file.withLock { f throws(FileError) -> UInt64? in
            // What is on disk decides, not what this object read earlier: a record it missed
            // would otherwise outlive the data it vouches for. A held record of the key goes
            // first, so that the tombstone follows it.
            try f.writeHeld(path)
            f.catchUp(path)
            if let failure = f.failure { throw failure }
            guard !f.foreign, f.slots[k] != nil else { return nil }
            return try f.append(JournalLine.encode(key: key, record: []), key: k, recordLength: 0, path: path)
        }
        if let number, durable { try flush(upTo: number) }
        return number
    }

    /// Writes the held lines, and flushes every line appended so far (the end of a run) where
    /// the cache flushes.
    /// - Throws: the failure to write held lines (they stay held) after the lines that are in
    ///   the file were flushed, or the flush's.
    func flush() throws(FileError) {
        let (last, unwritten) = file.withLock { f -> (UInt64, FileError?) in
            do throws(FileError) {
                try f.writeHeld(path)
            } catch {
                return (f.appended - UInt64(f.held.count), error)
            }
            return (f.appended, nil)
        }
        try flush(upTo: last)
        if let unwritten { throw unwritten }
    }

    /// Flushes on this thread until line `line` is on disk, unless a flush covered it already.
    private func flush(upTo line: UInt64) throws(FileError) {
        guard let ticket = flushTicket(upTo: line) else { return }
        defer { close(ticket.fd) }
        guard fdatasync(ticket.fd) == 0 else { throw FileError(path: path, operation: "flush", errno: errno) }
        flushed(ticket.covers)
    }

    /// For a flush elsewhere (the flush threads): a duplicate descriptor to `fdatasync` and then
    /// close, and the line to pass to `flushed` once it succeeded. Nil when nothing needs it
    /// (the cache does not flush, or a finished flush covered the line). Concurrent flushes
    /// each cover what was appended before them, and the file system joins them into one
    /// commit.
    func flushTicket(upTo line: UInt64) -> (fd: Int32, covers: UInt64)? {
        guard flushes else { return nil }
        return file.withLock { $0.flushTicket(upTo: line) }
    }

    /// Records that a flush from `flushTicket` succeeded.
    func flushed(_ covers: UInt64) {
        file.withLock { $0.durable = max($0.durable, covers) }
    }

    /// Reads the journal again where it changed on disk since this object read it: another
    /// process's run in between (`plan` and `apply` call this as they begin).
    func refresh() {
        file.withLock { f in
            try? f.writeHeld(path)
            if f.loaded { f.catchUp(path) }
        }
    }

    /// Rewrites the journal without its dead lines, when they outnumber the live ones (and
    /// `compactionFloor`). Best effort: any failure leaves the journal as it was.
    func compactIfWorthIt() {
        file.withLock { f in
            try? f.writeHeld(path)
            // The rewrite holds what is in the file: never while lines could not be written.
            guard f.held.isEmpty, f.loaded, f.failure == nil, !f.foreign, f.writable, f.dead >= Self.compactionFloor,
                  f.dead > f.slots.count else { return }
            if f.rewrite(to: path + ".tmp", flush: flushes), rename(path + ".tmp", path) == 0 {
                if flushes { FS.syncDirectory(FS.parentFolder(path)) }
            } else {
                unlink(path + ".tmp")
            }
            f.load(path)
        }
    }

    /// Lines in the journal: live records, and dead ones (for tests and compaction).
    var counts: (live: Int, dead: Int) {
        file.withLock { f in
            f.loadOnce(path)
            try? f.writeHeld(path)
            return (f.slots.count, f.dead)
        }
    }
}
