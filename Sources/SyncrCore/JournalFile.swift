#if canImport(Glibc)
import Glibc
#endif

/// The record journal's open file and what was read from it: `RecordJournal`'s state, used
/// under its lock (only a record's `pread`, `Found.read`, goes on after it is let go).
struct JournalFile {
    /// Where a key's record lies in the file.
    struct Slot {
        var offset: Int64
        var length: Int32

        /// The record of a line of `lineLength` bytes written at `at`: the line ends with it and
        /// a newline (`JournalLine`).
        init(lineAt at: Int64, lineLength: Int, recordLength: Int) {
            self.init(offset: at + Int64(lineLength - 1 - recordLength), length: Int32(recordLength))
        }

        init(offset: Int64, length: Int32) {
            self.offset = offset
            self.length = length
        }
    }

    /// Whether the file was looked for (it may not exist).
    var loaded = false
    /// The open file; -1 for none. A reader outside the lock keeps `descriptor` (and so the
    /// file) open while `load` or `close` let it go here.
    var fd: Int32 { descriptor?.fd ?? -1 }
    private(set) var descriptor: JournalDescriptor?
    /// Opened for writing (a journal another user owns is still read).
    var writable = false
    /// The header names another format (a later syncr's): neither read nor written.
    var foreign = false
    /// The file could not be read: nothing it says is known, so nothing may be written on the
    /// strength of it (a tombstone not written because a record was not seen would bring the
    /// record back).
    var failure: FileError?
    var device: UInt64 = 0
    var inode: UInt64 = 0
    /// The end of the last whole line (a damaged one too): where the next one goes.
    var end: Int64 = 0
    /// Each key's last record.
    var slots: [CacheKey: Slot] = [:]
    /// Lines that are no key's record any more (replaced, tombstones, damaged).
    var dead = 0
    /// Lines this object appended (the number of the last one), and how many of them are known
    /// to be on disk: a flush covers every line appended before it began. Kept across reloads.
    var appended: UInt64 = 0
    var durable: UInt64 = 0
    /// Lines taken by `hold` and not yet written, in order (`writeHeld` writes them).
    var held: [HeldLine] = []
    /// When the first of `held` was taken, and how long lines may wait.
    var heldSince: ContinuousClock.Instant?
    var heldTime = RecordJournal.heldTime

    /// A line waiting in memory: its key, its bytes, and how many of them are the record.
    struct HeldLine {
        var key: CacheKey
        var line: [UInt8]
        var recordLength: Int

        var record: ArraySlice<UInt8> {
            let slot = Slot(lineAt: 0, lineLength: line.count, recordLength: recordLength)
            return line[Int(slot.offset)..<Int(slot.offset) + recordLength]
        }
    }

    mutating func loadOnce(_ path: String) {
        if !loaded { load(path) }
    }

    /// Opens the file at `path` and reads every line; a missing file is an empty journal.
    mutating func load(_ path: String) {
        close()
        loaded = true
        var fd = open(path, O_RDWR | O_CLOEXEC)
        writable = fd >= 0
        if fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM) {
            fd = open(path, O_RDONLY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            if errno != ENOENT { failure = FileError(path: path, operation: "open", errno: errno) }
            return
        }
        descriptor = JournalDescriptor(fd)
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            failure = FileError(path: path, operation: "inspect", errno: errno)
            return
        }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        scan(from: 0, path: path)
    }

    /// Closes the file and forgets what was read from it; what this object took and did not
    /// write yet (held lines) stays, to be written into whatever file is there next.
    mutating func close() {
        var next = JournalFile()
        (next.appended, next.durable) = (appended, durable)
        (next.held, next.heldSince, next.heldTime) = (held, heldSince, heldTime)
        self = next
    }

    /// Reads what `path` holds now where it changed since it was read: another file in its
    /// place (rewritten, removed), or lines another writer appended.
    mutating func catchUp(_ path: String) {
        guard loaded else { return load(path) }
        var st = stat()
        guard stat(path, &st) == 0 else {
            // Removed (a cache folder cleared by hand): an empty journal from here on.
            if errno == ENOENT { close(); loaded = true } else { load(path) }
            return
        }
        if fd < 0 || failure != nil || UInt64(st.st_ino) != inode || UInt64(st.st_dev) != device
            || Int64(st.st_size) < end {
            load(path)
        } else if Int64(st.st_size) > end {
            scan(from: end, path: path)
        }
    }

    /// Reads the lines from `start` (0 or the end of a whole line) to the end of the file, with
    /// `pread`: a mapping could fault where a writer cuts the file meanwhile.
    mutating func scan(from start: Int64, path: String) {
        var buffer: [UInt8] = []
        var base = start
        var p = 0
        var atEnd = false
        var headerRead = start > 0
        while true {
            if !atEnd, let error = Self.readMore(fd, into: &buffer, at: base + Int64(buffer.count), atEnd: &atEnd) {
                failure = FileError(path: path, operation: "read", errno: error)
                return
            }
            if !headerRead {
                if buffer.count < RecordJournal.header.count && !atEnd { continue }
                headerRead = true
                guard checkHeader(buffer) else { return }
                p = RecordJournal.header.count
                end = Int64(p)
            }
            let done = buffer.withUnsafeBytes { consume($0, from: &p, base: base, atEnd: atEnd) }
            if done { return }
            // Keep the start of the unfinished line and read on.
            buffer.removeSubrange(0..<p)
            base += Int64(p)
            p = 0
        }
    }

    /// Whether `buffer` (the file's first bytes) starts with this format's header; sets
    /// `foreign` for a later format's. A header cut short or damaged by a crash is an empty
    /// journal (its lines cannot be trusted), started again at the first append.
    private mutating func checkHeader(_ buffer: [UInt8]) -> Bool {
        let header = RecordJournal.header
        if buffer.starts(with: header) { return true }
        let family = Array("syncr-records ".utf8)
        foreign = buffer.count > family.count && buffer.starts(with: family)
        end = 0
        return false
    }

    /// Reads the whole lines in `bytes` from `p`; returns true when a tail without a newline
    /// was reached at the end of the file (nothing more to read).
    private mutating func consume(_ bytes: UnsafeRawBufferPointer, from p: inout Int, base: Int64, atEnd: Bool) -> Bool {
        while p < bytes.count {
            switch JournalLine.parse(bytes, at: p) {
            case .incomplete:
                // A torn last line: where its key is legible, that key's record is in doubt.
                if atEnd { forgetKey(of: bytes, at: p) }
                return atEnd
            case .garbage(let next):
                // A damaged line may have been a tombstone or a newer record: its key, where
                // legible, has no record (the entry is fetched again rather than trusted).
                forgetKey(of: bytes, at: p)
                dead += 1
                p = next
                end = base + Int64(next)
            case .line(let key, let record, let next):
                let slot = Slot(offset: base + Int64(record.lowerBound), length: Int32(record.count))
                let replaced = record.isEmpty
                    ? slots.removeValue(forKey: key) != nil : slots.updateValue(slot, forKey: key) != nil
                if replaced { dead += 1 }
                if record.isEmpty { dead += 1 }
                p = next
                end = base + Int64(next)
            }
        }
        return atEnd
    }

    private mutating func forgetKey(of bytes: UnsafeRawBufferPointer, at p: Int) {
        guard bytes.count - p > 32, bytes[p + 32] == UInt8(ascii: " "),
              let key = CacheKey(hex: UnsafeRawBufferPointer(rebasing: bytes[p..<(p + 32)])) else { return }
        if slots.removeValue(forKey: key) != nil { dead += 1 }
    }

    /// Appends up to 256 KiB read at `offset` to `buffer`; returns errno on failure.
    private static func readMore(_ fd: Int32, into buffer: inout [UInt8], at offset: Int64, atEnd: inout Bool) -> Int32? {
        let chunk = 256 << 10
        let old = buffer.count
        var error: Int32?
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        let n = buffer.withUnsafeMutableBytes { raw -> Int in
            while true {
                let r = pread(fd, raw.baseAddress! + old, chunk, off_t(offset))
                if r < 0 && errno == EINTR { continue }
                if r < 0 { error = errno }
                return max(0, r)
            }
        }
        buffer.removeSubrange((old + n)...)
        atEnd = n == 0
        return error
    }

    /// Where the record of `key` is: a held line's bytes, or a place in the open file, to read
    /// with `read()` after the lock is let go.
    enum Found {
        case held([UInt8])
        case inFile(Slot, key: CacheKey, JournalDescriptor)

        /// The record's bytes (a `pread` for one in the file); nil when the file could not be
        /// read, or no longer holds the record there.
        func read() -> [UInt8]? {
            switch self {
            case .held(let record): record
            case .inFile(let slot, let key, let descriptor): JournalFile.read(slot, of: key, in: descriptor)
            }
        }
    }

    /// Where the record of `key` is; nil for none.
    func find(_ key: CacheKey) -> Found? {
        if let line = held.last(where: { $0.key == key }) { return .held(Array(line.record)) }
        guard let slot = slots[key], let descriptor else { return nil }
        return .inFile(slot, key: key, descriptor)
    }

    /// The record of `key` at `slot`, with one `pread` of its whole line; needs no lock. The
    /// bytes a slot points at do not change while this process holds the descriptor: lines are
    /// only appended, a rewrite is a new file renamed over this one, and this process cuts a
    /// file only where no slot points (after its last whole line, or whole when its header is
    /// damaged, when it has no slots). Another writer could (one that ignored the cache lock and
    /// cut the file, whose next lines then took the place): so the line is checked again as a
    /// scan checks it (length, CRC-32, key), and such bytes read as no record, never as
    /// another entry's.
    static func read(_ slot: Slot, of key: CacheKey, in descriptor: JournalDescriptor) -> [UInt8]? {
        // `<key> <length> <crc32> `: 32 + 1 + the length's digits + 1 + 8 + 1 bytes before it.
        let head = 43 + String(slot.length).utf8.count
        let start = slot.offset - Int64(head)
        let count = head + Int(slot.length) + 1
        guard start >= 0 else { return nil }
        var failed = false
        let line = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
            var n = 0
            while n < count {
                let r = pread(descriptor.fd, buffer.baseAddress! + n, count - n, off_t(start) + off_t(n))
                if r < 0 && errno == EINTR { continue }
                guard r > 0 else { failed = true; break }
                n += r
            }
            filled = n
        }
        guard !failed else { return nil }
        return line.withUnsafeBytes { bytes -> [UInt8]? in
            guard case .line(key, let record, count) = JournalLine.parse(bytes, at: 0) else { return nil }
            return Array(bytes[record])
        }
    }

    /// Writes `line` (for `key`, its record `recordLength` bytes) after the last whole line.
    /// - Returns: the line's number (for `flushTicket`), or nil when the journal is of another
    ///   format and takes nothing.
    mutating func append(_ line: [UInt8], key: CacheKey, recordLength: Int, path: String) throws(FileError) -> UInt64? {
        // Lines go in the order they were taken.
        try writeHeld(path)
        try prepareToWrite(path)
        if foreign { return nil }
        if end == 0 { try write(RecordJournal.header, path: path) }
        let at = end
        try write(line, path: path)
        let slot = Slot(lineAt: at, lineLength: line.count, recordLength: recordLength)
        let replaced = recordLength == 0 ? slots.removeValue(forKey: key) != nil : slots.updateValue(slot, forKey: key) != nil
        if replaced { dead += 1 }
        if recordLength == 0 { dead += 1 }
        appended += 1
        return appended
    }

    /// Whether a line may wait in memory: the file is open for writing, read, and of this
    /// format, so that writing it later needs nothing the append would have done first.
    var canHold: Bool { loaded && fd >= 0 && writable && failure == nil && !foreign && end > 0 }

    /// Takes `line` as `append` does, but may keep it in memory, to be written with the lines
    /// after it in one `pwrite`: once `RecordJournal.heldLines` wait, or a line comes after the
    /// first of them waited `heldTime`, or anything else touches the journal.
    /// - Returns: the line's number, or nil when the journal is of another format.
    mutating func hold(_ line: [UInt8], key: CacheKey, recordLength: Int, path: String) throws(FileError) -> UInt64? {
        guard canHold else { return try append(line, key: key, recordLength: recordLength, path: path) }
        let now = ContinuousClock.now
        let since = heldSince ?? now
        heldSince = since
        held.append(HeldLine(key: key, line: line, recordLength: recordLength))
        appended += 1
        let number = appended
        if held.count >= RecordJournal.heldLines || now - since >= heldTime { try writeHeld(path) }
        return number
    }

    /// Writes the held lines after the last whole line, in one `pwrite`. On failure they stay
    /// held, in order: the next write tries them again, and the end of the run's `flush`
    /// reports them if it cannot either.
    mutating func writeHeld(_ path: String) throws(FileError) {
        guard !held.isEmpty else { return }
        // Out of the state first: making the file ready may read it again (`load`), and they
        // must not be written twice.
        let lines = held
        let since = heldSince
        held = []
        heldSince = nil
        do throws(FileError) {
            try writeLines(lines, path: path)
        } catch {
            held = lines
            heldSince = since
            throw error
        }
    }

    private mutating func writeLines(_ lines: [HeldLine], path: String) throws(FileError) {
        try prepareToWrite(path)
        if foreign {
            // Another syncr's journal took the name under this run's lock: these records have
            // nowhere to go.
            throw FileError(path: path, operation: "write records into another syncr version's journal", errno: ENOTSUP)
        }
        if end == 0 { try write(RecordJournal.header, path: path) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.line.count })
        var placed: [(CacheKey, Slot)] = []
        placed.reserveCapacity(lines.count)
        for line in lines {
            let at = end + Int64(bytes.count)
            bytes += line.line
            placed.append((line.key, Slot(lineAt: at, lineLength: line.line.count, recordLength: line.recordLength)))
        }
        try write(bytes, path: path)
        for (key, slot) in placed where slots.updateValue(slot, forKey: key) != nil { dead += 1 }
    }

    /// Makes the file ready for an append at `end`: what is on disk read first (another
    /// writer's lines, another file in its place), created when missing, made writable when
    /// another user owns it, a torn last line ended.
    private mutating func prepareToWrite(_ path: String) throws(FileError) {
        // One `fstat` per append: its link count tells a file renamed over or removed (then
        // the name is looked at again), its size another writer's lines.
        var st = stat()
        var known = loaded && fd >= 0 && failure == nil && fstat(fd, &st) == 0 && st.st_nlink > 0
        if !known {
            catchUp(path)
        } else if Int64(st.st_size) > end {
            scan(from: end, path: path)
            known = false
        }
        if let failure { throw failure }
        if foreign { return }
        if fd < 0 {
            let made = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard made >= 0 else { throw FileError(path: path, operation: "create", errno: errno) }
            Glibc.close(made)
            load(path)
            if let failure { throw failure }
            known = false
        }
        if !writable {
            // Another user's file (a run under sudo): replaced by a copy of it that is ours, as
            // a record file used to be replaced by a new one.
            guard rewrite(to: path + ".tmp", flush: false), rename(path + ".tmp", path) == 0 else {
                unlink(path + ".tmp")
                throw FileError(path: path, operation: "open for writing", errno: EACCES)
            }
            load(path)
            if let failure { throw failure }
            guard writable else { throw FileError(path: path, operation: "open for writing", errno: EACCES) }
            known = false
        }
        if !known, fstat(fd, &st) != 0 { throw FileError(path: path, operation: "inspect", errno: errno) }
        if end == 0 && st.st_size > 0 {
            // A damaged header: nothing in the file is trusted; it starts again.
            guard ftruncate(fd, 0) == 0 else { throw FileError(path: path, operation: "start again", errno: errno) }
        } else if Int64(st.st_size) > end {
            // A torn last line stays, ended: a damaged line, whose key has no record.
            end = Int64(st.st_size)
            try write([UInt8(ascii: "\n")], path: path)
            dead += 1
        }
    }

    /// Writes `bytes` at `end` and moves `end` past them; on failure cuts the file back to `end`.
    private mutating func write(_ bytes: [UInt8], path: String) throws(FileError) {
        var n = 0
        while n < bytes.count {
            let r = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + n, $0.count - n, off_t(end) + off_t(n)) }
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else {
                let code = r < 0 ? errno : ENOSPC
                _ = ftruncate(fd, off_t(end))
                throw FileError(path: path, operation: "write", errno: code)
            }
            n += r
        }
        end += Int64(n)
    }

    /// What a flush that makes line `line` durable needs, outside the lock: a duplicate
    /// descriptor (the file may be reopened meanwhile; the caller closes it) and the last line
    /// it will cover. Nil when a finished flush covered the line already.
    func flushTicket(upTo line: UInt64) -> (fd: Int32, covers: UInt64)? {
        guard line > durable, fd >= 0 else { return nil }
        let copy = dup(fd)
        // Held lines are the last ones taken, and not in the file yet: a flush covers none.
        return copy >= 0 ? (copy, appended - UInt64(held.count)) : nil
    }

    /// Writes the header and every live record, in file order, to a new file at `temp`.
    func rewrite(to temp: String, flush: Bool) -> Bool {
        let out = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { return false }
        defer { Glibc.close(out) }
        var buffer = RecordJournal.header
        func drain() -> Bool {
            var n = 0
            while n < buffer.count {
                let r = buffer.withUnsafeBytes { Glibc.write(out, $0.baseAddress! + n, $0.count - n) }
                if r < 0 && errno == EINTR { continue }
                guard r > 0 else { return false }
                n += r
            }
            buffer.removeAll(keepingCapacity: true)
            return true
        }
        for (key, _) in slots.sorted(by: { $0.value.offset < $1.value.offset }) {
            guard let record = find(key)?.read() else { return false }
            buffer += JournalLine.encode(key: key.hex, record: record)
            if buffer.count >= 1 << 20, !drain() { return false }
        }
        guard drain() else { return false }
        return !flush || fdatasync(out) == 0
    }
}

/// An open journal file, closed when its last holder lets go of it: `RecordJournal.record`
/// reads a record outside the journal's lock, while another thread may reload the journal and
/// drop the file it read the record's place from.
final class JournalDescriptor: Sendable {
    let fd: Int32

    init(_ fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }
}
