/// One HTTP request for the transfer engine.
///
/// `url` is the expanded URL that goes on the wire; `displayURL` is the URL as the manifest wrote
/// it and is the only one that ever appears in an error.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET", head = "HEAD", put = "PUT", post = "POST", delete = "DELETE"
    }

    public var method: Method
    /// The URL sent over the wire (may contain expanded secrets; never print it).
    public var url: String
    /// The URL as written in the manifest; used in every message.
    public var displayURL: String
    /// Request headers in order (values may be secrets; never print them).
    public var headers: [(name: String, value: String)]
    /// Ask for `bytes=start-` or `bytes=start-end` (inclusive).
    public var range: ByteRange?
    /// A validator for `If-Range` (a strong ETag or an HTTP date).
    public var ifRange: String?
    /// Connect timeout in milliseconds.
    public var connectTimeoutMilliseconds: Int
    /// Abort when fewer than `lowSpeedLimit` bytes per second arrive for `lowSpeedTimeSeconds`.
    public var lowSpeedLimit: Int
    public var lowSpeedTimeSeconds: Int
    /// Once its answer has begun, a request fails with `TransferError.stalled` when no byte
    /// arrives for this long; a request with a body, once its first body byte was sent, when
    /// no byte of it is sent and none arrives for this long (0: only curl's low-speed limit).
    /// The engine checks it itself: curl's limit averages the speed over the last seconds, so
    /// a transfer that stops dead was failed up to 5 s after `lowSpeedTimeSeconds`, in curl's
    /// words. A transfer waiting for its disk (to take the last bytes, or to read the body's
    /// next ones) is exempt: the disk holds it up, not the server.
    public var stallMilliseconds = 0
    /// Who set `stallMilliseconds` and the connect timeout, for the words of a stall.
    public var timeoutOrigin = TimeoutOrigin.unstated
    /// Which redirects are followed and what they take along (see `RedirectPolicy`).
    public var redirects: RedirectPolicy
    /// Redirects followed at most (http and https only); `redirects.maxRedirects`.
    public var maxRedirects: Int {
        get { redirects.maxRedirects }
        set { redirects.maxRedirects = newValue }
    }
    /// Lowercased names of `headers` that carry credentials besides `Authorization`, `Cookie`
    /// and `Proxy-Authorization` (those whose values came from `${ENV}`): they are sent only to
    /// the origin of `url` (see `RedirectPolicy`).
    public var credentialHeaders: Set<String> = []
    /// Certificate checks and extra trusted CAs.
    public var tls = TLSOptions()
    /// Take credentials from a netrc file when the URL has none (`CURLOPT_NETRC` optional).
    public var netrc = false
    /// The netrc file (nil: curl's default, `~/.netrc`).
    public var netrcFile: String?
    /// The CA bundle built for `tls.extraAnchors`, set by the engine before the transfer.
    var trustBundle: TrustBundle?
    /// The body sent with a PUT or POST, streamed from disk with a `Content-Length`. A multipart
    /// body adds its `Content-Type` unless `headers` has one. GET and HEAD cannot carry one
    /// (`perform` fails with `.local` naming the body).
    public var body: RequestBody?
    /// Where the engine records how much of `body` was read, for progress display.
    public var bodyProgress: BodyProgress?
    /// This request needs a connection of its own, never shared with another request in flight:
    /// set on the pieces of a segmented download, whose point is parallel connections (per
    /// connection limits: TCP windows on long paths, throttling by CDNs and proxies). Others
    /// may share one HTTP/2 connection.
    public var ownConnection = false
    /// The proxy variables this request's proxy is chosen from (`no_proxy` included); nil:
    /// the engine's (`TransferEngine.Configuration.proxies`, the process's environment as it
    /// was when the engine was made), so that a request costs no reading of the environment.
    public var proxies: ProxyEnvironment?
    /// Send the URL's path as it is, `.` and `..` segments included (`CURLOPT_PATH_AS_IS`): an
    /// object store's key is a name, and its signature covers it as written.
    public var pathAsIs = false

    public init(method: Method = .get, url: String, displayURL: String,
                headers: [(name: String, value: String)] = [], range: ByteRange? = nil,
                ifRange: String? = nil, connectTimeoutMilliseconds: Int = 30_000,
                lowSpeedLimit: Int = 1, lowSpeedTimeSeconds: Int = 30, maxRedirects: Int = 10,
                body: RequestBody? = nil) {
        self.method = method
        self.url = url
        self.displayURL = displayURL
        self.headers = headers
        self.range = range
        self.ifRange = ifRange
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTimeSeconds = lowSpeedTimeSeconds
        self.redirects = RedirectPolicy(maxRedirects: maxRedirects)
        self.body = body
    }

    /// An upload: `body` sent with the method it is normally sent with (PUT for a file, POST for
    /// a form).
    public static func upload(_ body: RequestBody, url: String, displayURL: String,
                              headers: [(name: String, value: String)] = []) -> HTTPRequest {
        HTTPRequest(method: body.defaultMethod, url: url, displayURL: displayURL, headers: headers, body: body)
    }
}

/// An inclusive byte range as used by `Range: bytes=start-end`; `end == nil` means to the end.
public struct ByteRange: Sendable, Equatable, CustomStringConvertible {
    public var start: Int64
    public var end: Int64?

    public init(start: Int64, end: Int64? = nil) {
        self.start = start
        self.end = end
    }

    /// The value of a `Range` header (RFC 9110 §14.2).
    public var headerValue: String {
        if let end { return "bytes=\(start)-\(end)" }
        return "bytes=\(start)-"
    }

    public var description: String { headerValue }
}
