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
    ///
    /// Keys come URL-encoded (`encoding-type=url`), as the AWS SDKs ask for them: a key may
    /// hold characters XML 1.0 cannot carry (most control characters), which a server then
    /// sends as something else or not at all.
    public static func query(prefix: String, continuationToken token: String?) -> [(name: String, value: String)] {
        [("encoding-type", "url"), ("list-type", "2"), ("prefix", prefix)]
            + (token.map { [("continuation-token", $0)] } ?? [])
    }

    /// Reads a page; nil when the body is not a `ListBucketResult`, or a key said to be
    /// URL-encoded is not.
    public init?(parsing xml: String) {
        guard xml.firstRange(of: "<ListBucketResult") != nil else { return nil }
        // A server that ignores the parameter says nothing, and its keys are as they are.
        let encoded = S3ErrorResponse.element("EncodingType", in: xml) == "url"
        var objects: [Object] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<Contents>"), let close = rest[open.upperBound...].firstRange(of: "</Contents>") {
            let contents = String(rest[open.upperBound..<close.lowerBound])
            if var key = S3ErrorResponse.element("Key", in: contents) {
                if encoded {
                    guard let decoded = URIEncoding.decode(key, plusIsSpace: true) else { return nil }
                    key = decoded
                }
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
