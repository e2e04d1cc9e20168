/// A JSON value with ordered object keys, so that output keeps a stable, readable shape.
indirect enum JSON {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    static func optional(_ value: Int64?) -> JSON { value.map { .int($0) } ?? .null }
    static func optional(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }

    /// Compact rendering (one line), as scripts and `jq` expect.
    var rendered: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .double(let d):
            out += d.isFinite ? String(format3(d)) : "null"
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let values):
            out += "["
            for (i, v) in values.enumerated() {
                if i > 0 { out += "," }
                v.write(into: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, (k, v)) in pairs.enumerated() {
                if i > 0 { out += "," }
                JSON.quote(k, into: &out)
                out += ":"
                v.write(into: &out)
            }
            out += "}"
        }
    }

    /// Three decimals, no exponent: seconds read well that way.
    private func format3(_ d: Double) -> String {
        let scaled = (d * 1000).rounded()
        let whole = Int64(scaled / 1000)
        let frac = Int64(abs(scaled.truncatingRemainder(dividingBy: 1000)))
        let sign = d < 0 && whole == 0 ? "-" : ""
        let fracText = String(frac)
        return sign + String(whole) + "." + String(repeating: "0", count: 3 - fracText.count) + fracText
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f || (0x2028...0x2029).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
