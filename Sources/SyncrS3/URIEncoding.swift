/// Percent-encoding as SigV4 and S3 want it (the AWS "UriEncode"): every byte of the UTF-8 form
/// except the unreserved characters `A-Z a-z 0-9 - . _ ~` becomes `%XX` with upper-case hex.
/// Unlike `application/x-www-form-urlencoded`, a space is `%20`, never `+`.
public enum URIEncoding {
    /// `text` encoded; with `keepSlash`, `/` stays as it is (an object key in a path).
    public static func encode(_ text: String, keepSlash: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with every `%XX` decoded (bytes that do not form UTF-8 become U+FFFD); nil when a
    /// `%` is not followed by two hex digits.
    /// - Parameter plusIsSpace: `+` stands for a space, as in a form (and in the keys of a
    ///   listing asked for with `encoding-type=url`, where a `+` of the key is `%2B`).
    public static func decode(_ text: String, plusIsSpace: Bool = false) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if plusIsSpace && byte == UInt8(ascii: "+") { out.append(UInt8(ascii: " ")); continue }
            guard byte == UInt8(ascii: "%") else { out.append(byte); continue }
            guard bytes.count >= 2, let high = hexValue(bytes.removeFirst()), let low = hexValue(bytes.removeFirst())
            else { return nil }
            out.append(high << 4 | low)
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
