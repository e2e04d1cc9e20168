/// Writes one cache record's JSON straight into bytes, member by member (a tree of values
/// built first cost more than the writing). The caller gives members in key order, as
/// Foundation's encoder with sorted keys would write them, so a record's bytes depend only on
/// its content. Records hold objects, arrays, strings, integers and booleans; `RecordReader`
/// reads them back.
struct RecordWriter {
    private(set) var bytes: [UInt8]

    init() {
        bytes = []
        bytes.reserveCapacity(512)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The finished document.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    mutating func member(_ key: StaticString, _ value: String) {
        start(key)
        Self.writeString(value, into: &bytes)
    }

    mutating func member(_ key: StaticString, _ value: Int64) {
        start(key)
        Self.writeInt(value, into: &bytes)
    }

    mutating func member(_ key: StaticString, _ value: Bool) {
        start(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A member whose key is data (an algorithm's name), not one of the record's own.
    mutating func member(named key: String, _ value: String) {
        separate()
        Self.writeString(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.writeString(value, into: &bytes)
    }

    /// `"key":[[lower,upper],...]`.
    mutating func member(_ key: StaticString, ranges: [Range<Int64>]) {
        start(key)
        bytes.append(UInt8(ascii: "["))
        for (i, range) in ranges.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "["))
            Self.writeInt(range.lowerBound, into: &bytes)
            bytes.append(UInt8(ascii: ","))
            Self.writeInt(range.upperBound, into: &bytes)
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":{...}`, the nested members written by `body` (in key order too).
    mutating func object(_ key: StaticString, _ body: (inout RecordWriter) -> Void) {
        start(key)
        bytes.append(UInt8(ascii: "{"))
        body(&self)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `"key":` after a comma unless the member opens its object.
    /// The record's own keys need no escape: their bytes go in as they are (a `String` key,
    /// small, had no contiguous bytes to give and went in byte by byte).
    private mutating func start(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A comma, unless the member opens its object.
    private mutating func separate() {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
    }

    /// Decimal digits, made last to first on the stack and appended at once: appended one by
    /// one and the slice then reversed in place, they cost about 8,000 instructions a record.
    private static func writeInt(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Record strings (URLs, paths, keys) rarely need escaping: then they go in with one
        // copy. Byte by byte, they were 5% of the instructions of a run of small downloads.
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain != true { writeEscaped(s, into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether a byte of a string is written escaped.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func writeEscaped(_ s: String, into out: inout [UInt8]) {
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0x0A:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "n"))
            case 0..<0x20:
                let hex: StaticString = "0123456789abcdef"
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex.utf8Start[Int(byte >> 4)])
                out.append(hex.utf8Start[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
    }
}
