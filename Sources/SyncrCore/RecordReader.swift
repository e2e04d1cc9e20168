#if canImport(Glibc)
import Glibc
#endif

/// A cursor over the bytes of one cache record's JSON (the subset `RecordWriter` writes:
/// objects, arrays, strings, integers, booleans and null), for readers that take each member as
/// it comes.
///
/// `EntryState.init(recordJSON:)` reads a record straight into its fields with it. Building a
/// tree of values first (an enum, and an array for every object and array) cost about 34,000
/// instructions a record, an eighth of a no-op run over small files; read this way, about
/// 18,000, most of them the strings the record keeps.
///
/// Works on the caller's buffer (`read`), which outlives it: no copy, no bounds check beyond
/// its own, no reference counting per byte.
struct RecordReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    /// Deeper documents are not records (records nest three levels): a hostile file of
    /// brackets must not exhaust the stack.
    static let maxDepth = 16

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Runs `body` with a reader at the start of `bytes`; nil from `body`, or bytes left after
    /// the document, make the result nil.
    static func read<T>(_ bytes: [UInt8], _ body: (inout RecordReader) -> T?) -> T? {
        bytes.withUnsafeBufferPointer { buffer -> T? in
            var reader = RecordReader(buffer)
            guard let result = body(&reader) else { return nil }
            reader.skipSpace()
            return reader.index == buffer.count ? result : nil
        }
    }

    // MARK: objects and arrays, a member or an item at a time

    /// Reads an object's `{`; false (nothing read but blanks) when the next value is not an
    /// object. Its members are then read with `members`.
    mutating func enterObject() -> Bool {
        enter(UInt8(ascii: "{"))
    }

    /// Reads an array's `[`; false (nothing read but blanks) when the next value is not an
    /// array. Its items are then read with `items`.
    mutating func enterArray() -> Bool {
        enter(UInt8(ascii: "["))
    }

    /// A member's key as read: matched against the keys a reader knows (`case "url":`)
    /// without a `String` made of it, which only the few readers that keep keys ask for.
    /// It points into the bytes being read: valid only inside the `members` body it is given to.
    struct Key {
        /// The bytes between the quotes, when they hold no escape.
        fileprivate let raw: UnsafeBufferPointer<UInt8>?
        /// The key unescaped, when it held an escape.
        fileprivate let unescaped: String?

        var string: String {
            // `raw` was checked to be UTF-8 when it was read.
            unescaped ?? raw.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }

        static func ~= (pattern: StaticString, key: Key) -> Bool {
            let count = pattern.utf8CodeUnitCount
            guard let raw = key.raw else {
                return key.unescaped?.utf8.elementsEqual(UnsafeBufferPointer(start: pattern.utf8Start, count: count)) ?? false
            }
            guard raw.count == count, let base = raw.baseAddress else { return false }
            return memcmp(base, pattern.utf8Start, count) == 0
        }
    }

    /// Reads the members of the object just entered, through its `}`: `body` gets each key
    /// and reads its value. False when the bytes are not JSON, or `body` returned false.
    mutating func members(_ body: (Key, inout RecordReader) -> Bool) -> Bool {
        var first = true
        while true {
            guard let more = more(first: first, closing: UInt8(ascii: "}")) else { return false }
            guard more else { return true }
            guard peek == UInt8(ascii: "\""), let key = key() else { return false }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { return false }
            index += 1
            guard body(key, &self) else { return false }
            first = false
        }
    }

    /// Reads the items of the array just entered, through its `]`: `body` reads each one.
    /// False when the bytes are not JSON, or `body` returned false.
    mutating func items(_ body: (inout RecordReader) -> Bool) -> Bool {
        var first = true
        while true {
            guard let more = more(first: first, closing: UInt8(ascii: "]")) else { return false }
            guard more else { return true }
            guard body(&self) else { return false }
            first = false
        }
    }

    /// Reads past the next value, whatever it is (a member the reader does not take).
    /// `depth`: how deep it sits, objects and arrays counted. False when it is not JSON.
    mutating func skip(depth: Int) -> Bool {
        guard depth < Self.maxDepth else { return false }
        skipSpace()
        switch peek {
        case UInt8(ascii: "{"):
            index += 1
            return members { _, r in r.skip(depth: depth + 1) }
        case UInt8(ascii: "["):
            index += 1
            return items { $0.skip(depth: depth + 1) }
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case nil: return false
        default: return integer() != nil
        }
    }

    // MARK: scalars

    /// The next value if it is a string; any other value is read past and gives `.some(nil)`.
    /// nil: not JSON.
    mutating func stringValue(depth: Int) -> String?? {
        skipSpace()
        guard peek == UInt8(ascii: "\"") else { return skip(depth: depth) ? .some(nil) : nil }
        guard let text = string() else { return nil }
        return text
    }

    /// The next value if it is an integer; any other value is read past and gives `.some(nil)`.
    /// nil: not JSON (or an integer out of range).
    mutating func intValue(depth: Int) -> Int64?? {
        skipSpace()
        guard let byte = peek, byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte) else {
            return skip(depth: depth) ? .some(nil) : nil
        }
        guard let n = integer() else { return nil }
        return n
    }

    /// The next value if it is a boolean; any other value is read past and gives `.some(nil)`.
    /// nil: not JSON.
    mutating func boolValue(depth: Int) -> Bool?? {
        skipSpace()
        if peek == UInt8(ascii: "t") { return literal("true") ? true : nil }
        if peek == UInt8(ascii: "f") { return literal("false") ? false : nil }
        return skip(depth: depth) ? .some(nil) : nil
    }

    // MARK: the bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func enter(_ opening: UInt8) -> Bool {
        skipSpace()
        guard peek == opening else { return false }
        index += 1
        return true
    }

    /// After `{` or `[` (`first`) or a member or item: true when another one follows (the
    /// `,` before it read), false at the closing bracket (read).
    private mutating func more(first: Bool, closing: UInt8) -> Bool? {
        skipSpace()
        guard let byte = peek else { return nil }
        if byte == closing {
            index += 1
            return false
        }
        if first { return true }
        guard byte == UInt8(ascii: ",") else { return nil }
        index += 1
        skipSpace()
        return true
    }

    /// Reads `word` (`true`, `false`, `null`); false when the bytes are another.
    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { return false }
        index += count
        return true
    }

    /// An integer; nil when it is not one, or out of `Int64`'s range.
    private mutating func integer() -> Int64? {
        var negative = false
        if peek == UInt8(ascii: "-") { negative = true; index += 1 }
        var magnitude: UInt64 = 0
        var digits = 0
        while let byte = peek, (0x30...0x39).contains(byte) {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(byte - 0x30))
            guard !o1, !o2 else { return nil }
            magnitude = sum
            digits += 1
            index += 1
        }
        // Fractions and exponents are never written into a record.
        guard digits > 0, peek != UInt8(ascii: "."), peek != UInt8(ascii: "e"), peek != UInt8(ascii: "E")
        else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// A member's key (at its opening quote); nil when it is not a valid JSON string or not
    /// UTF-8.
    private mutating func key() -> Key? {
        let start = index + 1
        var end = start
        var ascii = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            ascii = ascii && bytes[end] < 0x80
            end += 1
        }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else {
            return string().map { Key(raw: nil, unescaped: $0) }
        }
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard ascii || String(validating: raw, as: UTF8.self) != nil else { return nil }
        index = end + 1
        return Key(raw: raw, unescaped: nil)
    }

    /// A string (at its opening quote); nil when it is not valid JSON or not UTF-8.
    private mutating func string() -> String? {
        index += 1  // the opening quote
        // Most strings have no escape: made from their bytes in place.
        var end = index
        var ascii = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            ascii = ascii && bytes[end] < 0x80
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            defer { index = end + 1 }
            let text = UnsafeBufferPointer(rebasing: bytes[index..<end])
            // ASCII is valid UTF-8: `decoding` takes it with one copy.
            return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
        }
        return escapedString()
    }

    /// The rest of a string that holds an escape, unescaped.
    private mutating func escapedString() -> String? {
        var out: [UInt8] = []
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = peek else { return nil }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    out += Array(String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                out.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (the `\u` already read), joining a surrogate pair.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        if (0xD800..<0xDC00).contains(high) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { return nil }
            index += 2
            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        }
        return Unicode.Scalar(high)
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
