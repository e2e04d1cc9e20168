/// Durations written in a manifest (`timeout: 30s`) and durations shown to people.
///
/// A duration is one or more `<number><unit>` parts with units `h`, `m`, `s`, `ms`, largest
/// first, each at most once: `500ms`, `30s`, `5m`, `1h`, `1m30s`, `1h30m`, `2s500ms`. A number
/// may carry a fraction (`1.5s`); the total is rounded down to whole milliseconds. A bare number
/// has no unit and is refused, so that `timeout: 30` is not silently read as 30 ms or 30 s.
public enum DurationText {
    private static let units: [(name: String, milliseconds: Int)] = [
        ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]

    /// Parses a duration.
    ///
    /// - Returns: milliseconds, or nil if the text is not a duration or does not fit an `Int`.
    public static func parse(_ text: String) -> Int? {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return nil }
        var i = 0
        var total = 0
        var nextUnit = 0  // index into `units`: parts must come largest first, each once
        while i < scalars.count {
            var whole = 0
            var digits = 0
            while i < scalars.count, let d = digit(scalars[i]) {
                let (m, o1) = whole.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(d)
                if o1 || o2 { return nil }
                whole = s
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            var fraction: [Int] = []
            if i < scalars.count, scalars[i] == "." {
                i += 1
                while i < scalars.count, let d = digit(scalars[i]) {
                    fraction.append(d)
                    i += 1
                }
                if fraction.isEmpty || fraction.count > 9 { return nil }
            }
            var name = ""
            while i < scalars.count, digit(scalars[i]) == nil, scalars[i] != "." {
                name.unicodeScalars.append(scalars[i])
                i += 1
            }
            guard let u = units.indices.first(where: { units[$0].name == name }),
                  u >= nextUnit else { return nil }
            nextUnit = u + 1
            let factor = units[u].milliseconds
            let (part, o1) = whole.multipliedReportingOverflow(by: factor)
            if o1 { return nil }
            var numerator = 0
            var denominator = 1
            for d in fraction {
                numerator = numerator * 10 + d
                denominator *= 10
            }
            // numerator < 10^9 and factor <= 3.6e6, so this product fits in 64 bits.
            let extra = numerator * factor / denominator
            let (sum, o2) = total.addingReportingOverflow(part)
            let (sum2, o3) = sum.addingReportingOverflow(extra)
            if o2 || o3 { return nil }
            total = sum2
        }
        return total
    }

    /// Formats milliseconds as the shortest exact duration that `parse` reads back: `0s`,
    /// `500ms`, `30s`, `1m30s`, `1h`, `2s500ms`. Zero parts are left out.
    public static func format(milliseconds: Int) -> String {
        if milliseconds == 0 { return "0s" }
        var rest = milliseconds.magnitude
        var text = milliseconds < 0 ? "-" : ""
        for unit in units {
            let size = UInt(unit.milliseconds)
            if rest >= size {
                text += "\(rest / size)\(unit.name)"
                rest %= size
            }
        }
        return text
    }

    private static func digit(_ s: Unicode.Scalar) -> Int? {
        guard s.isASCII, s.value >= 48, s.value <= 57 else { return nil }
        return Int(s.value - 48)
    }
}
