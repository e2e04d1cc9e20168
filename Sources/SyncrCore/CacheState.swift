import SyncrHTTP

/// The small record kept beside each cache entry's data: what the data is a copy of and how much
/// of it is known to be on disk.
///
/// It is written only after the bytes it vouches for were flushed, and replaced atomically, so a
/// crash at any moment leaves either the previous record or the new one, both true.
public struct EntryState: Codable, Sendable, Equatable {
    /// Format of this record; bumped when the meaning of a field changes.
    public var format: Int = 1
    /// The URL as written in the manifest (never the expanded one).
    public var url: String
    /// The URL after redirects, with secrets masked.
    public var finalURL: String?
    /// The resource's size, when known.
    public var size: Int64?
    /// Validators of the version the data is a copy of.
    public var etag: EntityTag?
    /// The `Last-Modified` date of that version, as the server sent it; used for `If-Range`
    /// only when there is no entity tag.
    public var lastModified: String?
    /// Every durable range of that version; segmented downloads leave holes between them.
    public var ranges = RangeSet()
    /// Bytes from offset 0 that are durable and belong to that version (the first missing
    /// byte). Setting it says exactly `0..<good` is on disk.
    public var good: Int64 {
        get { ranges.prefix }
        set { ranges = RangeSet([0..<newValue]) }
    }
    /// The whole resource was received (and verified, if checksums were given).
    public var complete: Bool = false
    /// Checksums verified over the complete data: algorithm → lowercase hex.
    public var verified: [String: String] = [:]
    /// The destination the complete file was moved to, and how it looked right after.
    public var destination: String?
    /// How `destination` looked right after the move, so a later plan can tell it is
    /// unchanged without reading it.
    public var destinationFingerprint: FileFingerprint?
    /// For an unpacked download: the digest of the folder's shape right after unpacking
    /// (`FolderReplace.fingerprint`).
    public var destinationTree: String?
    /// Unix seconds of the last update, for pruning.
    public var updated: Int64 = 0

    /// Creates an empty record for `url` (as written in the manifest): nothing cached yet.
    public init(url: String) {
        self.url = url
    }

    enum CodingKeys: String, CodingKey {
        case format, url, finalURL, size, etag, lastModified, good, ranges, complete, verified,
             destination, destinationFingerprint, destinationTree, updated
    }

    /// Writes the record as a keyed object (JSON in the `.state` file), with `good` beside
    /// `ranges` so the file says at a glance how far the download got.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(url, forKey: .url)
        try c.encodeIfPresent(finalURL, forKey: .finalURL)
        try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(etag, forKey: .etag)
        try c.encodeIfPresent(lastModified, forKey: .lastModified)
        // `good` is redundant with `ranges`, but says at a glance how far a file got.
        try c.encode(good, forKey: .good)
        try c.encode(ranges, forKey: .ranges)
        try c.encode(complete, forKey: .complete)
        try c.encode(verified, forKey: .verified)
        try c.encodeIfPresent(destination, forKey: .destination)
        try c.encodeIfPresent(destinationFingerprint, forKey: .destinationFingerprint)
        try c.encodeIfPresent(destinationTree, forKey: .destinationTree)
        try c.encode(updated, forKey: .updated)
    }

    /// Reads the form `encode(to:)` writes; a record with `good` but no `ranges` counts as
    /// `0..<good`, and absent optional fields take their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(Int.self, forKey: .format)
        url = try c.decode(String.self, forKey: .url)
        finalURL = try c.decodeIfPresent(String.self, forKey: .finalURL)
        size = try c.decodeIfPresent(Int64.self, forKey: .size)
        etag = try c.decodeIfPresent(EntityTag.self, forKey: .etag)
        lastModified = try c.decodeIfPresent(String.self, forKey: .lastModified)
        ranges = try c.decodeIfPresent(RangeSet.self, forKey: .ranges) ?? RangeSet()
        ranges.insert(0..<(try c.decodeIfPresent(Int64.self, forKey: .good) ?? 0))
        complete = try c.decodeIfPresent(Bool.self, forKey: .complete) ?? false
        verified = try c.decodeIfPresent([String: String].self, forKey: .verified) ?? [:]
        destination = try c.decodeIfPresent(String.self, forKey: .destination)
        destinationFingerprint = try c.decodeIfPresent(FileFingerprint.self, forKey: .destinationFingerprint)
        destinationTree = try c.decodeIfPresent(String.self, forKey: .destinationTree)
        updated = try c.decodeIfPresent(Int64.self, forKey: .updated) ?? 0
    }

    /// Bytes on disk that belong to the recorded version.
    public var cachedBytes: Int64 { max(good, ranges.count) }

    /// Records more durable bytes.
    public mutating func add(_ range: Range<Int64>) {
        ranges.insert(range)
    }

    /// The validator to send in `If-Range` when resuming this data: a strong ETag, else
    /// Last-Modified (RFC 9110 §13.1.5); nil when neither is fit. A date is never sent when the
    /// server gave an entity tag, since the client MUST NOT then use one.
    public var ifRangeValidator: String? {
        if let etag { return etag.isWeak ? nil : etag.headerValue }
        return lastModified
    }

    /// Whether the next run can go on from these bytes rather than start over: a complete
    /// file is placed from the cache, a partial one is resumed only against a validator
    /// (`Planner.decide` restarts one without). The messages that say what is kept ask this,
    /// and whether the server serves ranges (`Downloader.resumes`).
    public var resumable: Bool { complete || ifRangeValidator != nil }
}
