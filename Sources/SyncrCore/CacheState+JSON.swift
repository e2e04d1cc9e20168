import SyncrHTTP

/// A record's bytes, in the same JSON (same keys, sorted) that its `Codable` form gives, read and
/// written by `RecordJSON`: every entry reads its record once per run, and every download writes
/// one.
extension EntryState {
    /// The record in `bytes`, or nil when they are not a record (a torn or foreign file is
    /// treated as no record: the data is then simply fetched again). The members are read in
    /// one pass; a repeated key counts with its last value.
    init?(recordJSON bytes: [UInt8]) {
        guard case .object(let members)? = RecordJSON.parse(bytes) else { return nil }
        var format: Int64?, url: String?, good: Int64 = 0
        var ranges: [Range<Int64>] = []
        self.init(url: "")
        for member in members {
            let value = member.value
            switch member.key {
            case "format": format = value.int
            case "url": url = value.string
            case "finalURL": finalURL = value.string
            case "size": size = value.int
            case "etag":
                etag = value["opaque"]?.string.map { EntityTag(opaque: $0, isWeak: value["isWeak"]?.bool ?? false) }
            case "lastModified": lastModified = value.string
            case "ranges":
                guard let pairs = Self.ranges(value) else { return nil }
                ranges = pairs
            case "good": good = value.int ?? 0
            case "complete": complete = value.bool ?? false
            case "verified":
                verified = [:]
                if case .object(let digests) = value {
                    for digest in digests { verified[digest.key] = digest.value.string }
                }
            case "destination": destination = value.string
            case "destinationFingerprint":
                guard let device = value["device"]?.int, let inode = value["inode"]?.int, let size = value["size"]?.int,
                      let mtime = value["mtimeNanoseconds"]?.int else { return nil }
                destinationFingerprint = FileFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode),
                                                         size: size, mtimeNanoseconds: mtime)
            case "destinationTree": destinationTree = value.string
            case "updated": updated = value.int ?? 0
            default: break
            }
        }
        guard let format, let url else { return nil }
        self.url = url
        self.format = Int(format)
        self.ranges = RangeSet(ranges)
        self.ranges.insert(0..<good)
    }

    /// `[[lower, upper], ...]`; nil when any pair is not a range.
    private static func ranges(_ value: RecordJSON) -> [Range<Int64>]? {
        var ranges: [Range<Int64>] = []
        for pair in value.array ?? [] {
            guard let bounds = pair.array, bounds.count == 2, let lower = bounds[0].int, let upper = bounds[1].int,
                  lower >= 0, lower <= upper else { return nil }
            ranges.append(lower..<upper)
        }
        return ranges
    }

    /// The record as JSON bytes: members made in key order (as the Codable form sorts them),
    /// so writing needs no sort.
    var recordJSON: [UInt8] {
        typealias M = RecordJSON.Member
        var members: [M] = []
        members.reserveCapacity(15)
        members.append(M(key: "complete", value: .bool(complete)))
        if let destination { members.append(M(key: "destination", value: .string(destination))) }
        if let fp = destinationFingerprint {
            members.append(M(key: "destinationFingerprint", value: .object([
                M(key: "device", value: .int(Int64(bitPattern: fp.device))),
                M(key: "inode", value: .int(Int64(bitPattern: fp.inode))),
                M(key: "mtimeNanoseconds", value: .int(fp.mtimeNanoseconds)),
                M(key: "size", value: .int(fp.size)),
            ])))
        }
        if let destinationTree { members.append(M(key: "destinationTree", value: .string(destinationTree))) }
        if let etag {
            members.append(M(key: "etag", value: .object([
                M(key: "isWeak", value: .bool(etag.isWeak)), M(key: "opaque", value: .string(etag.opaque)),
            ])))
        }
        if let finalURL { members.append(M(key: "finalURL", value: .string(finalURL))) }
        members.append(M(key: "format", value: .int(Int64(format))))
        // `good` is redundant with `ranges`, but says at a glance how far a file got.
        members.append(M(key: "good", value: .int(good)))
        if let lastModified { members.append(M(key: "lastModified", value: .string(lastModified))) }
        members.append(M(key: "ranges", value: .array(ranges.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })))
        if let size { members.append(M(key: "size", value: .int(size))) }
        members.append(M(key: "updated", value: .int(updated)))
        members.append(M(key: "url", value: .string(url)))
        members.append(M(key: "verified", value: .members(verified.mapValues(RecordJSON.string))))
        return RecordJSON.object(members).bytes
    }
}
