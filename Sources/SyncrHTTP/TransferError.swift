import CCurl

/// Why a transfer failed. Every case names the URL as written in the manifest (`url`), never
/// the expanded one.
public enum TransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection failed or broke (DNS, refused, reset, cut short). Worth retrying.
    /// `code`: curl's; a SOCKS5 proxy's report that the server's port refused it is given as
    /// `CURLE_COULDNT_CONNECT`, the code of the same fact on a direct connection
    /// (`Transfer.connectionCode`). `redirectedTo`: where redirects took the request (`scheme://host:port/path`), the
    /// server that failed; nil when the request went where the manifest says.
    case connection(url: String, code: Int, message: String, redirectedTo: String? = nil)
    /// No progress for the configured time, or the connect timeout passed. Worth retrying.
    case timedOut(url: String, message: String)
    /// Nothing moved for `milliseconds` (the request's `stallMilliseconds`, the entry's
    /// `timeout`, set as `origin` says): no byte of an answer that had begun, or (`phase`) no
    /// byte of a request body sent and none received, or no answer after the body; with
    /// `lowSpeed`, bytes came, but fewer than that many a second (curl's low-speed limit, the
    /// entry's `low_speed`). Worth retrying.
    case stalled(url: String, milliseconds: Int, lowSpeed: Int?, phase: StallPhase = .receiving,
                 origin: TimeoutOrigin = .unstated)
    /// A TLS handshake or certificate problem.
    case tls(url: String, message: String)
    /// The proxy set in the environment answered instead of the server, or cannot be used:
    /// it asks for credentials (407), refused to open a tunnel (`status`: its answer to the
    /// CONNECT), or (`status` nil) a SOCKS proxy asks for credentials or refuses the server,
    /// the TLS handshake with an `https://` proxy failed, or its URL cannot be read or its
    /// name not resolved. `message`
    /// names the variable and says what to change in it. Not worth retrying: the proxy gives
    /// the same answer until its setting changes.
    case proxy(url: String, status: Int?, message: String)
    /// The server answered with a status that is not what was asked for. `proxy`: the HTTP
    /// proxy from the environment that forwarded the (plain-http) request, and may have given
    /// the answer itself; nil when the answer can only be the server's. `credentialsWithheld`:
    /// redirects took the request to another origin, where its credentials were not sent
    /// (`RedirectPolicy`), so a 401 or 403 there refused a request without them.
    case status(url: String, code: Int, retryAfter: RetryAfter?, body: String, proxy: EnvironmentProxy? = nil,
                credentialsWithheld: Bool = false)
    /// A ranged request was answered with the whole body (200): the server will not resume.
    case rangeNotHonoured(url: String)
    /// The answer breaks the protocol (e.g. a `Content-Range` that is not what was asked).
    case invalidResponse(url: String, message: String)
    /// Writing or reading local data failed (e.g. the disk is full).
    case local(path: String, errno: Int32, message: String)
    /// curl refused the netrc file that `netrc: true` has it read (`file`: the one named, nil
    /// for curl's default, `~/.netrc`), before any connection: it fails the request with a read
    /// error and `message` (".netrc parser error"), which names no file. Not worth retrying:
    /// the file says the same until it is fixed.
    case unreadableNetrc(url: String, file: String?, message: String)
    /// A file of a request body changed while it was being sent (`change`: how, when known):
    /// the body was stopped before its end, so the server never got a whole body of mixed bytes.
    case changedWhileSending(path: String, change: String?)
    /// Too many redirects, or a redirect to a scheme other than http(s).
    case redirect(url: String, message: String)
    /// The task was cancelled.
    case cancelled

    /// Whether nobody answered at all: the host's name did not resolve, or its port refused
    /// the connection, curl's or a SOCKS5 proxy's. (A timeout may be a slow server; this is not.)
    public var isUnreachable: Bool {
        guard case .connection(_, let code, _, _) = self else { return false }
        return code == Int(CURLE_COULDNT_RESOLVE_HOST.rawValue) || code == Int(CURLE_COULDNT_RESOLVE_PROXY.rawValue)
            || code == Int(CURLE_COULDNT_CONNECT.rawValue)
    }

    /// Where redirects took a request whose connection failed (`scheme://host:port/path`):
    /// the server nobody answered for is that one, not the manifest's. Nil otherwise.
    public var redirectTarget: String? {
        guard case .connection(_, _, _, let target) = self else { return nil }
        return target
    }

    /// Whether the server answered (with a status, a broken answer or a TLS handshake): it is
    /// there, whatever it said.
    public var isAnswer: Bool {
        switch self {
        case .status, .rangeNotHonoured, .invalidResponse, .redirect, .tls: return true
        // The proxy answered, or was not reached: the server was not asked.
        case .proxy, .connection, .timedOut, .stalled, .local, .unreadableNetrc, .changedWhileSending, .cancelled: return false
        }
    }

    /// The URL the failure names (as written); nil for a local failure or a cancellation.
    public var url: String? {
        switch self {
        case .connection(let url, _, _, _): return url
        case .timedOut(let url, _): return url
        case .stalled(let url, _, _, _, _): return url
        case .tls(let url, _): return url
        case .proxy(let url, _, _): return url
        case .status(let url, _, _, _, _, _): return url
        case .rangeNotHonoured(let url): return url
        case .invalidResponse(let url, _): return url
        case .redirect(let url, _): return url
        case .unreadableNetrc(let url, _, _): return url
        case .local, .changedWhileSending, .cancelled: return nil
        }
    }

    /// The same failure, its URL followed by where redirects took the request (`target`:
    /// scheme, host, port and path, no credentials, no query): the server that failed is that
    /// one, not the one the manifest names.
    func redirected(to target: String) -> TransferError {
        let url = { (url: String) in "\(url) (redirected to \(target))" }
        switch self {
        case .connection(let u, let code, let message, _):
            return .connection(url: url(u), code: code, message: message, redirectedTo: target)
        case .timedOut(let u, let message): return .timedOut(url: url(u), message: message)
        case .stalled(let u, let milliseconds, let lowSpeed, let phase, let origin):
            return .stalled(url: url(u), milliseconds: milliseconds, lowSpeed: lowSpeed, phase: phase, origin: origin)
        case .tls(let u, let message): return .tls(url: url(u), message: message)
        case .proxy(let u, let status, let message): return .proxy(url: url(u), status: status, message: message)
        case .status(let u, let code, let retryAfter, let body, let proxy, let withheld):
            return .status(url: url(u), code: code, retryAfter: retryAfter, body: body, proxy: proxy,
                           credentialsWithheld: withheld)
        case .rangeNotHonoured(let u): return .rangeNotHonoured(url: url(u))
        case .invalidResponse(let u, let message): return .invalidResponse(url: url(u), message: message)
        // A refused redirect names its target itself; netrc is not read after one to another origin.
        case .redirect, .local, .unreadableNetrc, .changedWhileSending, .cancelled: return self
        }
    }

    /// The same connection failure, told about another URL (as written) that was asked
    /// directly; any other failure is returned as it is.
    public func about(_ url: String) -> TransferError {
        guard case .connection(_, let code, let message, _) = self else { return self }
        return .connection(url: url, code: code, message: message)
    }

    public var description: String {
        switch self {
        case .connection(let url, _, let message, _):
            return "\(url): connection failed: \(message)"
        case .timedOut(let url, let message):
            return "\(url): timed out: \(message)"
        case .stalled(let url, let milliseconds, let lowSpeed, let phase, _):
            switch phase {
            case .receiving:
                return "\(url): " + Self.stallText(milliseconds: milliseconds, lowSpeed: lowSpeed.map { "\($0) bytes" })
            case .sending(let path):
                return "\(url): the server took no data for \(Self.secondsText(milliseconds)) while sending \(path)"
            case .awaitingAnswer(let path):
                return "\(url): no answer for \(Self.secondsText(milliseconds)) after sending \(path)"
            }
        case .tls(let url, let message):
            return "\(url): TLS error: \(message)"
        case .proxy(let url, _, let message):
            return "\(url): \(message)"
        case .status(let url, let code, _, let body, let proxy, _):
            return Self.statusText(url: url, code: code, body: body, proxy: proxy)
        case .rangeNotHonoured(let url):
            return "\(url): the server ignored the Range request and sent the whole file"
        case .invalidResponse(let url, let message):
            return "\(url): invalid response: \(message)"
        case .local(let path, _, let message):
            return "\(path): \(message)"
        case .unreadableNetrc(_, let file, _):
            return "\(file ?? "~/.netrc"): " + Self.unreadableNetrcText(self)
        case .changedWhileSending(let path, let change):
            return Self.changedWhileSendingText(path: path, change: change)
        case .redirect(let url, let message):
            return "\(url): \(message)"
        case .cancelled:
            return "cancelled"
        }
    }

    /// The one wording of a file that changed while it was sent: the body's reader (which
    /// stops the body as soon as it sees the change), the check after an upload and the S3
    /// multipart upload's all say it so (`SyncError.changedWhileSending` uses it too).
    public static func changedWhileSendingText(path: String, change: String?) -> String {
        "\(path): changed while it was being uploaded" + (change.map { " (\($0))" } ?? "")
            + "; it was not recorded as sent: run again once nothing writes to it, to send the new version"
    }
}

extension TransferError {
    /// `URL: HTTP 403 Forbidden (server said: ...)`; through a proxy, the answer is named as
    /// the proxy's or the server's, since either may have given it.
    static func statusText(url: String, code: Int, body: String, proxy: EnvironmentProxy?) -> String {
        let reason = HTTPStatus.reason(code)
        var text = "\(url): HTTP \(code)\(reason.isEmpty ? "" : " " + reason)"
        if let proxy { text += " through the proxy \(proxy.endpoint) set in \(proxy.variable)" }
        guard !body.isEmpty else { return text }
        return text + (proxy == nil ? " (server said: \(body))" : " (the proxy or the server said: \(body))")
    }

    /// What follows the file's name in the message of an `.unreadableNetrc` failure.
    public static func unreadableNetrcText(_ error: TransferError) -> String {
        guard case .unreadableNetrc(_, _, let message) = error else { return error.description }
        return "curl cannot read it as a netrc file (\(message)), and netrc: true is set: fix its syntax"
    }

    /// `no data for 10 s`, or `less than 1024 bytes/s for 10 s` (`lowSpeed`: the limit's
    /// amount, as the caller words sizes): what a stall was, in the request's settings.
    public static func stallText(milliseconds: Int, lowSpeed: String?) -> String {
        let time = secondsText(milliseconds)
        guard let lowSpeed else { return "no data for \(time)" }
        return "less than \(lowSpeed)/s for \(time)"
    }

    /// `10 s`, `1.5 s`: a stall's time as its messages say it.
    public static func secondsText(_ milliseconds: Int) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }
}

/// Reason phrases for the statuses syncr reports most.
public enum HTTPStatus {
    public static func reason(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
