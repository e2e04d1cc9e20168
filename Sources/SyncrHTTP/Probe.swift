/// What a server says about a resource: its size and validators.
public struct RemoteResource: Sendable, Equatable {
    /// The full size in bytes, nil when the server does not say.
    public var size: Int64?
    /// The `ETag` the server gave, if any.
    public var etag: EntityTag?
    /// The `Last-Modified` the server gave, as it wrote it, if any.
    public var lastModified: String?
    /// Whether the server says it serves byte ranges.
    public var acceptsRanges: Bool
    /// The URL after redirects (may carry secrets; never print it).
    public var finalURL: String
    /// How the facts were learnt, for plan reasons: "HEAD" or "GET Range: bytes=0-0".
    public var method: String

    /// Creates the facts from their parts (`Probe` learns them from an answer).
    public init(size: Int64?, etag: EntityTag?, lastModified: String?, acceptsRanges: Bool,
                finalURL: String, method: String) {
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.acceptsRanges = acceptsRanges
        self.finalURL = finalURL
        self.method = method
    }

    /// Reads the facts from a response head (HEAD, a ranged GET, or a full GET).
    public init(head: HTTPResponseHead, method: String) {
        self.init(size: head.status == 206 ? head.contentRange?.total : head.contentLength,
                  etag: head.etag, lastModified: head.lastModified,
                  acceptsRanges: head.status == 206 || head.acceptsByteRanges,
                  finalURL: head.effectiveURL, method: method)
    }

    /// A validator fit for `If-Range` (RFC 9110 §13.1.5): a strong ETag, else Last-Modified,
    /// but never a date when the server sent an entity tag (weak ones cannot be used at all).
    public var ifRangeValidator: String? {
        if let etag { return etag.isWeak ? nil : etag.headerValue }
        return lastModified
    }
}

extension Transport {
    /// Asks the server about a resource with HEAD; where HEAD is refused (405, 501) or gives no
    /// length, falls back to `GET` with `Range: bytes=0-0` and reads the size from `Content-Range`.
    ///
    /// Follows redirects. A non-2xx final answer is returned as `.status`.
    public func probe(_ request: HTTPRequest) async -> Result<RemoteResource, TransferError> {
        var head = request
        head.method = .head
        head.range = nil
        head.ifRange = nil
        let first = await perform(head, sink: DiscardSink())
        var fallbackReason: TransferError?
        switch first {
        case .success(let response):
            if response.head.isSuccess {
                let resource = RemoteResource(head: response.head, method: "HEAD")
                if resource.size != nil && response.head.contentEncoding == nil { return .success(resource) }
            } else if ![405, 501, 403].contains(response.head.status) {
                // Only "HEAD is not allowed here" answers are worth a GET; 403 is included since
                // presigned URLs are often signed for GET alone.
                return .failure(response.statusError(url: request.displayURL)!)
            } else {
                fallbackReason = response.statusError(url: request.displayURL)
            }
        case .failure(let error):
            return .failure(error)
        }
        var get = request
        get.method = .get
        get.range = ByteRange(start: 0, end: 0)
        get.ifRange = nil
        switch await perform(get, sink: DiscardSink()) {
        case .success(let response):
            guard response.head.isSuccess else {
                return .failure(response.statusError(url: request.displayURL) ?? fallbackReason!)
            }
            var resource = RemoteResource(head: response.head, method: "GET Range: bytes=0-0")
            if response.head.status == 200 {
                // The server ignored the range: it cannot resume, whatever it claims.
                resource.acceptsRanges = false
            }
            if response.head.contentEncoding != nil { resource.size = nil }
            return .success(resource)
        case .failure(let error):
            return .failure(error)
        }
    }
}
