/// One page of a ListObjectsV2 answer (`GET /bucket?list-type=2&prefix=...`).
public struct ListObjectsPage: Sendable, Equatable {
    /// One object: its key and size.
    public struct Object: Sendable, Equatable {
        public var key: String
        public var size: Int64
        public init(key: String, size: Int64) {
            self.key = key
            self.size = size
        }
    }

    public var objects: [Object]
    /// Where the next page starts, when this one is not the last.
    public var continuationToken: String?

    /// The query of the request for the page after `token` (nil: the first) of `prefix`.
    public static func query(prefix: String, continuationToken token: String?) -> [(name: String, value: String)] {
        [("list-type", "2"), ("prefix", prefix)] + (token.map { [("continuation-token", $0)] } ?? [])
    }

    /// Reads a page; nil when the body is not a `ListBucketResult`.
    public init?(parsing xml: String) {
        guard xml.firstRange(of: "<ListBucketResult") != nil else { return nil }
        var objects: [Object] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<Contents>"), let close = rest[open.upperBound...].firstRange(of: "</Contents>") {
            let contents = String(rest[open.upperBound..<close.lowerBound])
            if let key = S3ErrorResponse.element("Key", in: contents) {
                objects.append(Object(key: key, size: Int64(S3ErrorResponse.element("Size", in: contents) ?? "") ?? 0))
            }
            rest = rest[close.upperBound...]
        }
        self.objects = objects
        let truncated = S3ErrorResponse.element("IsTruncated", in: xml) == "true"
        continuationToken = truncated ? S3ErrorResponse.element("NextContinuationToken", in: xml) : nil
        if truncated && continuationToken == nil { return nil }
    }
}
