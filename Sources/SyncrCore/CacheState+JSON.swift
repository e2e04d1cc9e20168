import SyncrHTTP

/// A record's bytes, in the same JSON (same keys, sorted) that its `Codable` form gives, read by
/// `RecordReader` and written by `RecordWriter`, without Foundation's generic coders (about
/// 100 µs a record): every entry reads its record once per run, and every download writes one.
extension EntryState {
    /// The record in `bytes`, or nil when they are not a record (a torn or foreign file is
    /// treated as no record: the data is then simply fetched again). The members are read in
    /// one pass, straight into their fields; a repeated key counts with its last value.
    init?(recordJSON bytes: [UInt8]) {
        guard let state = RecordReader.read(bytes, { r -> EntryState? in
            guard r.enterObject() else { return nil }
            var fields = RecordFields()
            guard r.members({ fields.take($0, from: &$1) }) else { return nil }
            return fields.state
        }) else { return nil }
        self = state
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
            for (name, digest) in verified.sorted(by: { $0.key < $1.key }) { o.member(named: name, digest) }
        }
        return w.finish()
    }
}

/// A record being read member by member: the state, and the members it is made whole from at
/// the end (`format` and `url` must be there; `good` joins `ranges`).
private struct RecordFields {
    private var read = EntryState(url: "")
    private var format: Int64?
    private var url: String?
    private var good: Int64 = 0
    private var ranges: [Range<Int64>] = []

    /// The record, once every member is read; nil without `format` or `url`, or with a negative
    /// `good` or `size` (no writer makes one; `0..<good` would stop the program).
    var state: EntryState? {
        guard let format, let url, good >= 0, (read.size ?? 0) >= 0 else { return nil }
        var state = read
        state.url = url
        state.format = Int(format)
        state.ranges = RangeSet(ranges)
        state.ranges.insert(0..<good)
        return state
    }

    /// Reads the value of the member `key`. False when the bytes are not JSON, or the value
    /// makes them no record (a range that is not one, a fingerprint without its numbers).
    /// A value of the wrong kind leaves its field empty, as a missing one does.
    mutating func take(_ key: RecordReader.Key, from r: inout RecordReader) -> Bool {
        switch key {
        case "format": return r.intValue(depth: 1).map { format = $0 } != nil
        case "url": return r.stringValue(depth: 1).map { url = $0 } != nil
        case "finalURL": return r.stringValue(depth: 1).map { read.finalURL = $0 } != nil
        case "size": return r.intValue(depth: 1).map { read.size = $0 } != nil
        case "etag": return Self.etag(&r).map { read.etag = $0 } != nil
        case "lastModified": return r.stringValue(depth: 1).map { read.lastModified = $0 } != nil
        case "ranges": return Self.ranges(&r).map { ranges = $0 } != nil
        case "good": return r.intValue(depth: 1).map { good = $0 ?? 0 } != nil
        case "complete": return r.boolValue(depth: 1).map { read.complete = $0 ?? false } != nil
        case "verified": return Self.verified(&r).map { read.verified = $0 } != nil
        case "destination": return r.stringValue(depth: 1).map { read.destination = $0 } != nil
        case "destinationFingerprint": return Self.fingerprint(&r).map { read.destinationFingerprint = $0 } != nil
        case "destinationTree": return r.stringValue(depth: 1).map { read.destinationTree = $0 } != nil
        case "updated": return r.intValue(depth: 1).map { read.updated = $0 ?? 0 } != nil
        default: return r.skip(depth: 1)
        }
    }

    /// `{"isWeak": ..., "opaque": ...}`: the tag; `.some(nil)` for a value that is no tag.
    private static func etag(_ r: inout RecordReader) -> EntityTag?? {
        guard r.enterObject() else { return r.skip(depth: 1) ? .some(nil) : nil }
        var opaque: String?, isWeak: Bool?
        let ok = r.members { key, r in
            switch key {
            case "opaque": return r.stringValue(depth: 2).map { opaque = $0 } != nil
            case "isWeak": return r.boolValue(depth: 2).map { isWeak = $0 } != nil
            default: return r.skip(depth: 2)
            }
        }
        guard ok else { return nil }
        return opaque.map { EntityTag(opaque: $0, isWeak: isWeak ?? false) }
    }

    /// `[[lower, upper], ...]`; `.some([])` for a value that is not an array, nil when any
    /// pair is not a range.
    private static func ranges(_ r: inout RecordReader) -> [Range<Int64>]? {
        guard r.enterArray() else { return r.skip(depth: 1) ? [] : nil }
        var ranges: [Range<Int64>] = []
        let ok = r.items { r in
            guard let range = pair(&r) else { return false }
            ranges.append(range)
            return true
        }
        return ok ? ranges : nil
    }

    /// `[lower, upper]`: exactly two integers, `0 <= lower <= upper`.
    private static func pair(_ r: inout RecordReader) -> Range<Int64>? {
        guard r.enterArray() else { return nil }
        var bounds: (Int64?, Int64?) = (nil, nil)
        var count = 0
        let ok = r.items { r in
            guard let value = r.intValue(depth: 3), let n = value, count < 2 else { return false }
            if count == 0 { bounds.0 = n } else { bounds.1 = n }
            count += 1
            return true
        }
        guard ok, let lower = bounds.0, let upper = bounds.1, lower >= 0, lower <= upper else { return nil }
        return lower..<upper
    }

    /// `{algorithm: hex, ...}`; empty for a value that is not an object. A digest that is not a
    /// string leaves its algorithm out.
    private static func verified(_ r: inout RecordReader) -> [String: String]? {
        guard r.enterObject() else { return r.skip(depth: 1) ? [:] : nil }
        var verified: [String: String] = [:]
        let ok = r.members { key, r in r.stringValue(depth: 2).map { verified[key.string] = $0 } != nil }
        return ok ? verified : nil
    }

    /// `{"device", "inode", "mtimeNanoseconds", "size"}`, all integers; nil otherwise (the
    /// record is then no record).
    private static func fingerprint(_ r: inout RecordReader) -> FileFingerprint? {
        guard r.enterObject() else { return nil }
        var device: Int64?, inode: Int64?, size: Int64?, mtime: Int64?
        let ok = r.members { key, r in
            switch key {
            case "device": return r.intValue(depth: 2).map { device = $0 } != nil
            case "inode": return r.intValue(depth: 2).map { inode = $0 } != nil
            case "size": return r.intValue(depth: 2).map { size = $0 } != nil
            case "mtimeNanoseconds": return r.intValue(depth: 2).map { mtime = $0 } != nil
            default: return r.skip(depth: 2)
            }
        }
        guard ok, let device, let inode, let size, let mtime else { return nil }
        return FileFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size,
                               mtimeNanoseconds: mtime)
    }
}
