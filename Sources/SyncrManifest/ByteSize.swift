/// Sizes written in a manifest (`min_split: 8MiB`) and sizes shown to people.
///
/// Parsing accepts a non-negative number, optionally with a fraction, an optional space, and a
/// unit (letters case-insensitive):
/// - none or `B`: bytes;
/// - `KiB`, `MiB`, `GiB`, `TiB`: powers of 1024;
/// - `K`, `M`, `G`, `T`: the same powers of 1024 (curl and aria2 read `8M` this way);
/// - `KB`, `MB`, `GB`, `TB`: powers of 1000, as the SI prefixes say.
///
/// A fraction of at most 18 digits is allowed (`1.5MiB`); the result is rounded down to whole
/// bytes. syncr-manifest(5) and the README document each of these; `ByteSizeTests` holds them.
public enum ByteSize {
    private static let units: [String: Int64] = [
        "": 1, "b": 1,
        "k": 1 << 10, "kib": 1 << 10, "kb": 1_000,
        "m": 1 << 20, "mib": 1 << 20, "mb": 1_000_000,
        "g": 1 << 30, "gib": 1 << 30, "gb": 1_000_000_000,
        "t": 1 << 40, "tib": 1 << 40, "tb": 1_000_000_000_000,
    ]

    /// Parses `512`, `64KiB`, `8 MiB`, `1.5GiB`, `10MB`.
    ///
    /// - Returns: the size in bytes, or nil if the text is not a size or does not fit an `Int64`.
    public static func parse(_ text: String) -> Int64? {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        var whole: Int64 = 0
        var sawDigit = false
        while i < scalars.count, let d = digit(scalars[i]) {
            let (m, o1) = whole.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(d)
            if o1 || o2 { return nil }
            whole = s
            sawDigit = true
            i += 1
        }
        var fraction: [Int64] = []
        if i < scalars.count, scalars[i] == "." {
            i += 1
            while i < scalars.count, let d = digit(scalars[i]) {
                fraction.append(d)
                i += 1
            }
            if fraction.isEmpty { return nil }
        }
        guard sawDigit else { return nil }
        if i < scalars.count, scalars[i] == " " { i += 1 }
        var unitText = ""
        unitText.unicodeScalars.append(contentsOf: scalars[i...])
        guard let unit = units[unitText.lowercased()] else { return nil }
        let (bytes, overflow) = whole.multipliedReportingOverflow(by: unit)
        if overflow { return nil }
        // unit * 0.d1d2...dn, exactly, rounded down; 128-bit so 18 digits times 1 TiB cannot overflow.
        guard fraction.count <= 18 else { return nil }
        var numerator: Int128 = 0
        var denominator: Int128 = 1
        for d in fraction {
            numerator = numerator * 10 + Int128(d)
            denominator *= 10
        }
        let extra = Int64(numerator * Int128(unit) / denominator)
        let (total, o) = bytes.addingReportingOverflow(extra)
        return o ? nil : total
    }

    /// Parses a size a second, as `low_speed` takes it: a size, then optionally `/s` (`10KiB/s`,
    /// `512/s`). The docs call it a size per second and syncr prints rates as `10.0 KiB/s`, so
    /// `low_speed: 10KiB/s` was written, and refused; the bare size keeps meaning the same.
    ///
    /// - Returns: bytes a second, or nil as `parse` returns it for the size.
    public static func parseRate(_ text: String) -> Int64? {
        guard text.hasSuffix("/s") || text.hasSuffix("/S") else { return parse(text) }
        return parse(String(text.dropLast(2)))
    }

    /// Formats a size with IEC units for people: `0 B`, `512 B`, `1.5 KiB`, `8.0 MiB`, `1.0 GiB`.
    ///
    /// Below 1 KiB the exact byte count is shown; above, one decimal, rounded half up, in the
    /// largest unit that keeps the number below 1024.
    public static func format(_ bytes: Int64) -> String {
        let sign = bytes < 0 ? "-" : ""
        let magnitude = bytes.magnitude
        if magnitude < 1024 { return "\(sign)\(magnitude) B" }
        let names = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var index = 0
        var unit: UInt64 = 1024
        while index + 1 < names.count, magnitude >= unit * 1024 { unit *= 1024; index += 1 }
        var whole = magnitude / unit
        var tenths = ((magnitude % unit) * 10 + unit / 2) / unit
        if tenths == 10 { whole += 1; tenths = 0 }
        if whole == 1024, index + 1 < names.count {
            whole = 1
            index += 1
        }
        return "\(sign)\(whole).\(tenths) \(names[index])"
    }

    private static func digit(_ s: Unicode.Scalar) -> Int64? {
        guard s.isASCII, s.value >= 48, s.value <= 57 else { return nil }
        return Int64(s.value - 48)
    }
}
