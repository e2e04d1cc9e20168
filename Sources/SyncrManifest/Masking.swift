/// Writes masks: the one way a stretch of text that holds a secret becomes `***`.
public enum Masking {
    /// `bytes` (UTF-8) with each of `ranges` replaced by `***`. The ranges may come in any
    /// order; overlapping ones merge into one mask (two secrets that overlap leave no fragment
    /// of either), merely adjacent ones stay two masks.
    public static func masked(_ bytes: [UInt8], ranges: [Range<Int>]) -> String {
        var merged: [Range<Int>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, r.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var position = 0
        for r in merged {
            out += bytes[position..<r.lowerBound]
            out += "***".utf8
            position = r.upperBound
        }
        out += bytes[position...]
        return String(decoding: out, as: UTF8.self)
    }
}
