#if canImport(Glibc)
import Glibc
#endif
import SyncrArchive

/// One line of the record journal (`RecordJournal`):
/// `<key> <length> <crc32> <record>\n`, where `key` is the entry's 32 hex digits, `length` the
/// record's byte count in decimal, `crc32` eight hex digits of the CRC-32 of the key and the
/// record together, and `record` the entry's JSON (`EntryState.recordJSON`, which escapes every
/// control character, so it never holds a newline). An empty record is a tombstone: the entry
/// has no record from there on.
///
/// The length and checksum make a line torn by a crash, or overwritten with anything else, read
/// as no line at all, never as a shorter or different record.
enum JournalLine {
    /// What is at a position of the journal.
    enum Parsed: Equatable {
        /// A whole line: its key, where its record lies, and where the next line starts.
        case line(key: CacheKey, record: Range<Int>, next: Int)
        /// Bytes that are not a line, up to and with the next newline, where the next line may start.
        case garbage(next: Int)
        /// No newline before the end: the last line was being written, or was torn.
        case incomplete
    }

    /// The line that records `record` for `key` (a tombstone when `record` is empty).
    static func encode(key: String, record: [UInt8]) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(record.count + 54)
        line.append(contentsOf: key.utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: String(record.count).utf8)
        line.append(UInt8(ascii: " "))
        let keyBytes = Array(key.utf8)
        let crc = keyBytes.withUnsafeBytes { k in record.withUnsafeBytes { checksum(key: k, record: $0) } }
        let digits: StaticString = "0123456789abcdef"
        for shift in stride(from: 28, through: 0, by: -4) {
            line.append(digits.utf8Start[Int(crc >> UInt32(shift) & 0xF)])
        }
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: record)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Reads the line that starts at `start` in `bytes`.
    static func parse(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Parsed {
        // memchr: the whole journal passes through here once per run.
        guard start < bytes.count,
              let found = memchr(bytes.baseAddress! + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
        else { return .incomplete }
        let newline = UnsafeRawPointer(found) - bytes.baseAddress!
        let next = newline + 1
        let line = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
        // key, space, at least one digit, space, 8 hex digits, space: 44 bytes (a tombstone).
        guard line.count >= 44, line[32] == UInt8(ascii: " "), let key = CacheKey(hex: line[0..<32]) else {
            return .garbage(next: next)
        }
        var i = 33
        var length = 0
        while i < line.count, i < 41, let digit = decimal(line[i]) {
            length = length * 10 + digit
            i += 1
        }
        guard i > 33, i + 10 <= line.count, line[i] == UInt8(ascii: " "), line[i + 9] == UInt8(ascii: " "),
              let crc = hex32(line[(i + 1)..<(i + 9)]), line.count - (i + 10) == length
        else { return .garbage(next: next) }
        let record = UnsafeRawBufferPointer(rebasing: line[(i + 10)...])
        guard checksum(key: UnsafeRawBufferPointer(rebasing: line[0..<32]), record: record) == crc else {
            return .garbage(next: next)
        }
        return .line(key: key, record: (start + i + 10)..<newline, next: next)
    }

    /// The CRC-32 of the key's digits followed by the record. On the bytes in place: every line
    /// of a journal's one pass, and every record a run reads, is checked here.
    private static func checksum(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(key)
        crc.update(record)
        return crc.value
    }

    private static func decimal(_ c: UInt8) -> Int? {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") ? Int(c - UInt8(ascii: "0")) : nil
    }

    private static func hex32(_ digits: Slice<UnsafeRawBufferPointer>) -> UInt32? {
        var value: UInt32 = 0
        for c in digits {
            guard let v = CacheKey.digit(c) else { return nil }
            value = value << 4 | UInt32(v)
        }
        return value
    }
}
