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
    public var lastModified: String?
    /// Bytes from offset 0 that are durable and belong to that version.
    public var good: Int64 = 0
    /// The whole resource was received (and verified, if checksums were given).
    public var complete: Bool = false
    /// Checksums verified over the complete data: algorithm → lowercase hex.
    public var verified: [String: String] = [:]
    /// The destination the complete file was moved to, and how it looked right after.
    public var destination: String?
    public var destinationFingerprint: FileFingerprint?
    /// Unix seconds of the last update, for pruning.
    public var updated: Int64 = 0

    public init(url: String) {
        self.url = url
    }

    /// The validator to send in `If-Range` when resuming this data: a strong ETag, else
    /// Last-Modified (RFC 9110 §13.1.5); nil when neither is fit. A date is never sent when the
    /// server gave an entity tag, since the client MUST NOT then use one.
    public var ifRangeValidator: String? {
        if let etag { return etag.isWeak ? nil : etag.headerValue }
        return lastModified
    }
}
