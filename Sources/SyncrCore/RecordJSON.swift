/// The small JSON that cache records are written in, read and written without Foundation's
/// `JSONDecoder`: its generic Codable path cost about 100 µs per record, the largest part of a
/// no-op run's time per entry. Only what records use: objects, arrays, strings, integers,
/// booleans and null. Objects are written with sorted keys, so a record's bytes depend only on
/// its content.
enum RecordJSON: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([RecordJSON])
    /// Members in the order read; a record has about a dozen, which a linear search finds
    /// sooner than a dictionary is built and hashed (every entry reads its record each run).
    case object([Member])

    /// One `"key": value` of an object.
    struct Member: Equatable {
        var key: String
        var value: RecordJSON
    }

    /// An object of these members (written with sorted keys whatever their order here).
    static func members(_ members: [String: RecordJSON]) -> RecordJSON {
        .object(members.map { Member(key: $0.key, value: $0.value) })
    }

    // MARK: reading

    /// Parses one JSON document; nil when it is not one this reader understands.
    static func parse(_ bytes: [UInt8]) -> RecordJSON? {
        var reader = Reader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == bytes.count ? value : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> RecordJSON? {
            // Records nest three levels; a deeper document is not one of ours.
            guard depth < 16 else { return nil }
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(RecordJSON.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return integer()
            }
        }

        mutating func literal(_ word: String, _ value: RecordJSON) -> RecordJSON? {
            let utf8 = word.utf8
            guard bytes.count - index >= utf8.count, bytes[index..<index + utf8.count].elementsEqual(utf8) else { return nil }
            index += utf8.count
            return value
        }

        mutating func integer() -> RecordJSON? {
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            var magnitude: UInt64 = 0
            var digits = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(UInt64(bytes[index] - 0x30))
                guard !o1, !o2 else { return nil }
                magnitude = sum
                digits += 1
                index += 1
            }
            // Fractions and exponents are never written into a record.
            guard digits > 0, index == bytes.count || ![UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index])
            else { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return .int(Int64(magnitude))
        }

        mutating func string() -> String? {
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
                // ASCII is valid UTF-8: `decoding` takes it with one copy, where `validating`
                // (generic, unspecialized) cost 1,000 instructions a string, 30,000 per record.
                return ascii ? String(decoding: bytes[index..<end], as: UTF8.self)
                             : String(validating: bytes[index..<end], as: UTF8.self)
            }
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
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
        mutating func unicodeEscape() -> Unicode.Scalar? {
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

        mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else { return nil }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func array(depth: Int) -> RecordJSON? {
            index += 1
            var items: [RecordJSON] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpace()
                guard index < bytes.count else { return nil }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "]") { return .array(items) }
                guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
            }
        }

        mutating func object(depth: Int) -> RecordJSON? {
            index += 1
            var members: [Member] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let item = value(depth: depth + 1) else { return nil }
                members.append(Member(key: key, value: item))
                skipSpace()
                guard index < bytes.count else { return nil }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "}") { return .object(members) }
                guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
            }
        }
    }

    // MARK: writing

    /// The document as compact JSON with sorted keys.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let n): Self.writeInt(n, into: &out)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // A record's members are made in key order; only others need sorting (a copy).
            let inOrder = zip(members, members.dropFirst()).allSatisfy { $0.key < $1.key }
            for (i, member) in (inOrder ? members : members.sorted { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Decimal digits, written in place (a `String` per number cost more than the digits).
    static func writeInt(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        let first = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[first...].reverse()
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
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

    // MARK: access

    /// The value of `key` in an object (the last one, when a key is repeated).
    subscript(key: String) -> RecordJSON? {
        if case .object(let members) = self { return members.last { $0.key == key }?.value }
        return nil
    }

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var int: Int64? { if case .int(let n) = self { return n }; return nil }
    var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    var array: [RecordJSON]? { if case .array(let a) = self { return a }; return nil }
}
