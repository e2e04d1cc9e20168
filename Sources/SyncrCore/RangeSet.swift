/// A set of byte positions kept as sorted, disjoint, non-adjacent half-open ranges: which parts
/// of a file are on disk.
public struct RangeSet: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The ranges, sorted, disjoint and non-adjacent; change them through `insert`.
    public private(set) var ranges: [Range<Int64>] = []

    /// Creates an empty set: no byte on disk.
    public init() {}

    /// Creates a set covering `ranges`, which may overlap and come in any order.
    public init(_ ranges: [Range<Int64>]) {
        for r in ranges { insert(r) }
    }

    /// Adds a range, merging it with any it overlaps or touches.
    public mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var lower = range.lowerBound, upper = range.upperBound
        var result: [Range<Int64>] = []
        result.reserveCapacity(ranges.count + 1)
        var placed = false
        for r in ranges {
            if r.upperBound < lower {
                result.append(r)
            } else if r.lowerBound > upper {
                if !placed { result.append(lower..<upper); placed = true }
                result.append(r)
            } else {
                lower = min(lower, r.lowerBound)
                upper = max(upper, r.upperBound)
            }
        }
        if !placed { result.append(lower..<upper) }
        ranges = result
    }

    /// Bytes covered.
    public var count: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

    /// Length of the run that starts at byte 0 (the first byte missing).
    public var prefix: Int64 {
        guard let first = ranges.first, first.lowerBound == 0 else { return 0 }
        return first.upperBound
    }

    /// Whether no byte is covered.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The parts of `0..<size` not covered.
    public func gaps(upTo size: Int64) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var position: Int64 = 0
        for r in ranges {
            if r.lowerBound >= size { break }
            if r.lowerBound > position { result.append(position..<r.lowerBound) }
            position = max(position, r.upperBound)
        }
        if position < size { result.append(position..<size) }
        return result
    }

    /// Whether every byte of `0..<size` is covered.
    public func covers(_ size: Int64) -> Bool { gaps(upTo: size).isEmpty }

    // Stored as [[start, end], ...] (end exclusive): short, and readable in a state file.
    /// Reads the `[[start, end], ...]` form; throws on a pair that is not two ordered, non-negative
    /// offsets.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var pairs: [Range<Int64>] = []
        while !container.isAtEnd {
            let pair = try container.decode([Int64].self)
            guard pair.count == 2, pair[0] >= 0, pair[0] <= pair[1] else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "bad range \(pair)")
            }
            pairs.append(pair[0]..<pair[1])
        }
        self.init(pairs)
    }

    /// Writes `[[start, end], ...]` with `end` exclusive.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for r in ranges { try container.encode([r.lowerBound, r.upperBound]) }
    }

    /// `start-end` pairs with `end` inclusive (as in a `Range` header), comma-separated.
    public var description: String {
        ranges.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ",")
    }
}
