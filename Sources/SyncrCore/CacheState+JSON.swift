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
        var w = RecordWriter()
        w.member("complete", complete)
        if let destination { w.member("destination", destination) }
        if let fp = destinationFingerprint {
            w.object("destinationFingerprint") {
                $0.member("device", Int64(bitPattern: fp.device))
                $0.member("inode", Int64(bitPattern: fp.inode))
                $0.member("mtimeNanoseconds", fp.mtimeNanoseconds)
                $0.member("size", fp.size)
            }
        }
        if let destinationTree { w.member("destinationTree", destinationTree) }
        if let etag {
            w.object("etag") {
                $0.member("isWeak", etag.isWeak)
                $0.member("opaque", etag.opaque)
            }
        }
        if let finalURL { w.member("finalURL", finalURL) }
        w.member("format", Int64(format))
        // `good` is redundant with `ranges`, but says at a glance how far a file got.
        w.member("good", good)
        if let lastModified { w.member("lastModified", lastModified) }
        w.member("ranges", ranges: ranges.ranges)
        if let size { w.member("size", size) }
        w.member("updated", updated)
        w.member("url", url)
        w.object("verified") { o in
            for (name, digest) in verified.sorted(by: { $0.key < $1.key }) { o.member(name, digest) }
        }
        return w.finish()
    }
}
