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
        public init(number: Int, etag: String, size: Int64, lastModified: String) {
            self.number = number
            self.etag = etag
            self.size = size
            self.lastModified = lastModified
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
                                  lastModified: S3ErrorResponse.element("LastModified", in: text) ?? ""))
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

    /// The body of CompleteMultipartUpload for parts (number, ETag), in order.
    public static func completion(_ parts: [(number: Int, etag: String)]) -> String {
        "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + parts.sorted { $0.number < $1.number }
                .map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\"\($0.etag)\"</ETag></Part>" }.joined()
            + "</CompleteMultipartUpload>"
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
