/// The records of a pax extended header (`x` for the next entry, `g` for all that follow), as
/// POSIX.1-2001 `pax` defines them: `"<length> <keyword>=<value>\n"`, where the decimal length
/// counts the whole record, itself included.
struct PaxRecords: Equatable {
    /// Values by keyword, in bytes (a `path` need not be UTF-8 when `hdrcharset=BINARY`). An
    /// empty value is kept: POSIX says it removes the keyword, so the header field applies again.
    var values: [String: [UInt8]] = [:]

    enum Problem: Error, Equatable {
        case malformed(offset: Int)
    }

    /// Parses the data of an extended header.
    static func parse(_ data: [UInt8]) throws(Problem) -> PaxRecords {
        var records = PaxRecords()
        var position = 0
        while position < data.count {
            // Some writers pad the data with NULs; nothing follows them.
            if data[position] == 0, data[position...].allSatisfy({ $0 == 0 }) { break }
            var index = position
            var length = 0
            while index < data.count, (0x30...0x39).contains(data[index]) {
                length = length * 10 + Int(data[index] - 0x30)
                guard length <= data.count else { throw .malformed(offset: position) }
                index += 1
            }
            let end = position + length
            guard index > position, index < data.count, data[index] == 0x20, end <= data.count,
                  end > index + 1, data[end - 1] == 0x0A,
                  let equals = data[(index + 1)..<(end - 1)].firstIndex(of: 0x3D),
                  let key = String(validating: data[(index + 1)..<equals], as: UTF8.self), !key.isEmpty
            else { throw .malformed(offset: position) }
            records.values[key] = Array(data[(equals + 1)..<(end - 1)])
            position = end
        }
        return records
    }

    /// The later records win, key by key.
    mutating func merge(_ other: PaxRecords) {
        values.merge(other.values) { $1 }
    }

    /// A value, or nil when absent or removed (empty).
    subscript(_ key: String) -> [UInt8]? {
        guard let value = values[key], !value.isEmpty else { return nil }
        return value
    }

    /// Whether any keyword describes a GNU sparse file (`GNU.sparse.*`, formats 0.0 to 1.0).
    var describesSparseFile: Bool {
        values.keys.contains { $0.hasPrefix("GNU.sparse.") }
    }

    /// A decimal integer (`size`, `uid`, `gid`).
    static func integer(_ value: [UInt8]) -> Int64? {
        guard !value.isEmpty, value.count <= 18, value.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return value.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }

    /// A time (`mtime`): decimal seconds since the epoch, maybe negative, maybe with a fraction,
    /// rounded down to whole seconds.
    static func time(_ value: [UInt8]) -> Int64? {
        var digits = value[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        let dot = digits.firstIndex(of: UInt8(ascii: ".")) ?? digits.endIndex
        let fraction = digits[dot...].dropFirst()
        guard let whole = integer(Array(digits[..<dot])),
              fraction.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        if !negative { return whole }
        // -1.5 is 1.5 s before the epoch: round down to -2.
        return fraction.contains { $0 != 0x30 } ? -whole - 1 : -whole
    }
}
