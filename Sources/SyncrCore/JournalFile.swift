#if canImport(Glibc)
import Glibc
#endif

/// The record journal's open file and what was read from it: `RecordJournal`'s state, always
/// used under its lock.
struct JournalFile {
    /// Where a key's record lies in the file.
    struct Slot {
        var offset: Int64
        var length: Int32
    }

    /// Whether the file was looked for (it may not exist).
    var loaded = false
    var fd: Int32 = -1
    /// Opened for writing (a read-only cache is still read).
    var writable = false
    /// The header names another format: neither read nor written.
    var foreign = false
    var device: UInt64 = 0
    var inode: UInt64 = 0
    /// The end of the last whole line: where the next one goes.
    var end: Int64 = 0
    /// Each key's last record.
    var slots: [CacheKey: Slot] = [:]
    /// Lines that are no key's record any more (replaced, tombstones, torn).
    var dead = 0
    /// Lines were appended since the last flush.
    var unflushed = false

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
        guard fd >= 0 else { return }
        self.fd = fd
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        scan(from: 0)
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        self = JournalFile()
    }

    /// Reads the lines from `start` (0 or the end of a whole line) to the end of the file.
    mutating func scan(from start: Int64) {
        var st = stat()
        guard fd >= 0, fstat(fd, &st) == 0, Int64(st.st_size) > start else { return }
        let size = Int(st.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else { return }
        defer { munmap(map, size) }
        let bytes = UnsafeRawBufferPointer(start: map, count: size)
        var p = Int(start)
        if p == 0 {
            let header = RecordJournal.header
            if size >= header.count && bytes[0..<header.count].elementsEqual(header) {
                p = header.count
                end = Int64(p)
            } else {
                // A header cut short by a crash is an empty journal; anything else is not ours.
                foreign = !header.starts(with: bytes)
                return
            }
        }
        while p < size {
            switch JournalLine.parse(bytes, at: p) {
            case .incomplete:
                return
            case .garbage(let next):
                dead += 1
                p = next
            case .line(let key, let record, let next):
                let replaced = record.isEmpty
                    ? slots.removeValue(forKey: key) != nil
                    : slots.updateValue(Slot(offset: Int64(record.lowerBound), length: Int32(record.count)), forKey: key) != nil
                if replaced { dead += 1 }
                if record.isEmpty { dead += 1 }
                p = next
                end = Int64(next)
            }
        }
    }

    /// The record of `key`, read from the file.
    func read(_ key: CacheKey) -> [UInt8]? {
        guard let slot = slots[key] else { return nil }
        let count = Int(slot.length)
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
            var n = 0
            while n < count {
                let r = pread(fd, buffer.baseAddress! + n, count - n, off_t(slot.offset) + off_t(n))
                if r < 0 && errno == EINTR { continue }
                guard r > 0 else { failed = true; break }
                n += r
            }
            filled = n
        }
        return failed ? nil : bytes
    }

    /// Writes `line` (for `key`, its record `recordLength` bytes) after the last whole line.
    mutating func append(_ line: [UInt8], key: CacheKey, recordLength: Int, path: String) throws(FileError) {
        try openForWriting(path)
        if end == 0 { try write(RecordJournal.header, path: path) }
        let at = end
        try write(line, path: path)
        let slot = Slot(offset: at + Int64(line.count - 1 - recordLength), length: Int32(recordLength))
        let replaced = recordLength == 0 ? slots.removeValue(forKey: key) != nil : slots.updateValue(slot, forKey: key) != nil
        if replaced { dead += 1 }
        if recordLength == 0 { dead += 1 }
        unflushed = true
    }

    /// Flushes the file when `durable`.
    mutating func finish(durable: Bool, path: String) throws(FileError) {
        guard durable, fd >= 0 else { return }
        guard fdatasync(fd) == 0 else { throw FileError(path: path, operation: "flush", errno: errno) }
        unflushed = false
    }

    /// Makes the file ready for an append at `end`: created when missing, lines another writer
    /// added read first, a torn end cut off.
    private mutating func openForWriting(_ path: String) throws(FileError) {
        if fd < 0 || !writable {
            let made = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard made >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
            close()
            loaded = true
            fd = made
            writable = true
            var st = stat()
            if fstat(fd, &st) == 0 {
                device = UInt64(st.st_dev)
                inode = UInt64(st.st_ino)
            }
            scan(from: 0)
            if foreign { return }
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileError(path: path, operation: "inspect", errno: errno) }
        if Int64(st.st_size) > end { scan(from: end) }
        if Int64(st.st_size) != end, ftruncate(fd, off_t(end)) != 0 {
            throw FileError(path: path, operation: "cut the torn end off", errno: errno)
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
            guard let record = read(key) else { return false }
            buffer += JournalLine.encode(key: key.hex, record: record)
            if buffer.count >= 1 << 20, !drain() { return false }
        }
        guard drain() else { return false }
        return !flush || fdatasync(out) == 0
    }
}
