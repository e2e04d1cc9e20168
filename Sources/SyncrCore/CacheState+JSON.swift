import SyncrHTTP

/// A record's bytes, in the same JSON (same keys, sorted) that its `Codable` form gives, read and
/// written by `RecordJSON`: every entry reads its record once per run, and every download writes
/// one.
extension EntryState {
    /// The record in `bytes`, or nil when they are not a record (a torn or foreign file is
    /// treated as no record: the data is then simply fetched again).
    init?(recordJSON bytes: [UInt8]) {
        guard let json = RecordJSON.parse(bytes), let format = json["format"]?.int,
              let url = json["url"]?.string else { return nil }
        self.init(url: url)
        self.format = Int(format)
        finalURL = json["finalURL"]?.string
        size = json["size"]?.int
        if let tag = json["etag"], let opaque = tag["opaque"]?.string {
            etag = EntityTag(opaque: opaque, isWeak: tag["isWeak"]?.bool ?? false)
        }
        lastModified = json["lastModified"]?.string
        var ranges: [Range<Int64>] = []
        for pair in json["ranges"]?.array ?? [] {
            guard let bounds = pair.array, bounds.count == 2, let lower = bounds[0].int, let upper = bounds[1].int,
                  lower >= 0, lower <= upper else { return nil }
            ranges.append(lower..<upper)
        }
        self.ranges = RangeSet(ranges)
        self.ranges.insert(0..<(json["good"]?.int ?? 0))
        complete = json["complete"]?.bool ?? false
        if case .object(let members)? = json["verified"] {
            for member in members { verified[member.key] = member.value.string }
        }
        destination = json["destination"]?.string
        if let fp = json["destinationFingerprint"] {
            guard let device = fp["device"]?.int, let inode = fp["inode"]?.int, let size = fp["size"]?.int,
                  let mtime = fp["mtimeNanoseconds"]?.int else { return nil }
            destinationFingerprint = FileFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode),
                                                     size: size, mtimeNanoseconds: mtime)
        }
        destinationTree = json["destinationTree"]?.string
        updated = json["updated"]?.int ?? 0
    }

    /// The record as JSON bytes.
    var recordJSON: [UInt8] {
        var members: [String: RecordJSON] = [
            "format": .int(Int64(format)),
            "url": .string(url),
            // `good` is redundant with `ranges`, but says at a glance how far a file got.
            "good": .int(good),
            "ranges": .array(ranges.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) }),
            "complete": .bool(complete),
            "verified": .members(verified.mapValues(RecordJSON.string)),
            "updated": .int(updated),
        ]
        if let finalURL { members["finalURL"] = .string(finalURL) }
        if let size { members["size"] = .int(size) }
        if let etag { members["etag"] = .members(["opaque": .string(etag.opaque), "isWeak": .bool(etag.isWeak)]) }
        if let lastModified { members["lastModified"] = .string(lastModified) }
        if let destination { members["destination"] = .string(destination) }
        if let fp = destinationFingerprint {
            members["destinationFingerprint"] = .members([
                "device": .int(Int64(bitPattern: fp.device)), "inode": .int(Int64(bitPattern: fp.inode)),
                "size": .int(fp.size), "mtimeNanoseconds": .int(fp.mtimeNanoseconds),
            ])
        }
        if let destinationTree { members["destinationTree"] = .string(destinationTree) }
        return RecordJSON.members(members).bytes
    }
}
