/// Writes one JSON object straight into bytes, member by member: for the record every download
/// writes, where building a `RecordJSON` tree first (an enum and an array per value) cost more
/// than the writing. The caller gives members in key order, as `RecordJSON` sorts them, so that
/// the bytes are the same as the tree's.
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

    mutating func member(_ key: String, _ value: String) {
        start(key)
        RecordJSON.writeString(value, into: &bytes)
    }

    mutating func member(_ key: String, _ value: Int64) {
        start(key)
        RecordJSON.writeInt(value, into: &bytes)
    }

    mutating func member(_ key: String, _ value: Bool) {
        start(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `"key":[[lower,upper],...]`.
    mutating func member(_ key: String, ranges: [Range<Int64>]) {
        start(key)
        bytes.append(UInt8(ascii: "["))
        for (i, range) in ranges.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "["))
            RecordJSON.writeInt(range.lowerBound, into: &bytes)
            bytes.append(UInt8(ascii: ","))
            RecordJSON.writeInt(range.upperBound, into: &bytes)
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":{...}`, the nested members written by `body` (in key order too).
    mutating func object(_ key: String, _ body: (inout RecordWriter) -> Void) {
        start(key)
        bytes.append(UInt8(ascii: "{"))
        body(&self)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `"key":` after a comma unless the member opens its object.
    private mutating func start(_ key: String) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        RecordJSON.writeString(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
