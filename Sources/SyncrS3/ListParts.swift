/// One page of a ListParts answer (`GET /bucket/key?uploadId=...`), and the XML of
/// CreateMultipartUpload's and CompleteMultipartUpload's answers and request.
public struct ListPartsPage: Sendable, Equatable {
    /// One part the store holds.
    public struct Part: Sendable, Equatable {
        public var number: Int
        /// The ETag without quotes: the MD5 of the part's bytes, in hex, for S3 and its clones.
        public var etag: String
        public var size: Int64
        /// ISO 8601, as the store wrote it (such strings sort by time).
        public var lastModified: String
        /// The part's SHA-256 (base64), listed by S3 for an upload created with that checksum;
        /// nil where the store lists none (SeaweedFS).
        public var checksumSHA256: String?
        public init(number: Int, etag: String, size: Int64, lastModified: String, checksumSHA256: String? = nil) {
            self.number = number
            self.etag = etag
            self.size = size
            self.lastModified = lastModified
            self.checksumSHA256 = checksumSHA256
        }
    }

    /// One part of a CompleteMultipartUpload request.
    public struct CompletedPart: Sendable, Equatable {
        public var number: Int
        public var etag: String
        /// The SHA-256 (base64) the part was sent with, which S3 requires again here for an
        /// upload created with that checksum.
        public var sha256: String?
        public init(number: Int, etag: String, sha256: String? = nil) {
            self.number = number
            self.etag = etag
            self.sha256 = sha256
        }
    }

    public var parts: [Part]
    /// The `part-number-marker` of the next page, when this one is not the last.
    public var nextMarker: String?

    /// Reads a page; nil when the body is not a `ListPartsResult`.
    public init?(parsing xml: String) {
        guard xml.firstRange(of: "<ListPartsResult") != nil else { return nil }
        var parts: [Part] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<Part>"), let close = rest[open.upperBound...].firstRange(of: "</Part>") {
            let text = String(rest[open.upperBound..<close.lowerBound])
            if let number = Int(S3ErrorResponse.element("PartNumber", in: text) ?? ""),
               let etag = S3ErrorResponse.element("ETag", in: text) {
                parts.append(Part(number: number, etag: Self.unquoted(etag),
                                  size: Int64(S3ErrorResponse.element("Size", in: text) ?? "") ?? -1,
                                  lastModified: S3ErrorResponse.element("LastModified", in: text) ?? "",
                                  checksumSHA256: S3ErrorResponse.element("ChecksumSHA256", in: text).flatMap { $0.isEmpty ? nil : $0 }))
            }
            rest = rest[close.upperBound...]
        }
        self.parts = parts
        let truncated = S3ErrorResponse.element("IsTruncated", in: xml) == "true"
        nextMarker = truncated ? S3ErrorResponse.element("NextPartNumberMarker", in: xml) : nil
        if truncated && nextMarker == nil { return nil }
    }

    /// One part per number from all pages: where a number appears twice (a part uploaded again;
    /// SeaweedFS lists both copies, S3 keeps the newest), the newest wins, and on a tie the one
    /// listed last.
    public static func newest(_ parts: [Part]) -> [Int: Part] {
        var result: [Int: Part] = [:]
        for part in parts {
            if let seen = result[part.number], seen.lastModified > part.lastModified { continue }
            result[part.number] = part
        }
        return result
    }

    /// The `UploadId` of a CreateMultipartUpload answer.
    public static func uploadID(_ xml: String) -> String? {
        S3ErrorResponse.element("UploadId", in: xml).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The body of CompleteMultipartUpload for `parts`, in order. An ETag is the store's own
    /// text (RFC 9110 lets it hold `&` and `<`), so it is escaped; base64 needs no escaping.
    public static func completion(_ parts: [CompletedPart]) -> String {
        "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + parts.sorted { $0.number < $1.number }.map { part in
                "<Part><PartNumber>\(part.number)</PartNumber><ETag>\"\(escaped(part.etag))\"</ETag>"
                    + (part.sha256.map { "<ChecksumSHA256>\($0)</ChecksumSHA256>" } ?? "") + "</Part>"
            }.joined()
            + "</CompleteMultipartUpload>"
    }

    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }

    /// An ETag header's value without its quotes.
    public static func unquotedETag(_ etag: String) -> String { unquoted(etag) }

    static func unquoted(_ etag: String) -> String {
        var text = etag
        if text.hasPrefix("\"") { text.removeFirst() }
        if text.hasSuffix("\"") { text.removeLast() }
        return text
    }
}
