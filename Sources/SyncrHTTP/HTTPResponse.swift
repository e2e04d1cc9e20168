/// The outcome of a transfer that reached the server and got an answer.
public struct HTTPResponse: Sendable {
    /// The final response's head.
    public var head: HTTPResponseHead
    /// Body bytes handed to the sink.
    public var bodyBytes: Int64
    /// The sink stopped the transfer on purpose (`SinkDecision.stop`).
    public var stoppedEarly: Bool
    /// For a non-2xx answer: the start of its body, control characters removed. The sink sees
    /// none of such a body.
    public var errorBody: String
    /// Request body bytes sent (curl's `CURLINFO_SIZE_UPLOAD_T`); 0 for requests without a
    /// body, and less than the body's length when the server answered before taking all of it
    /// (e.g. a 413 in reply to `Expect: 100-continue`).
    public var uploadedBytes: Int64
    /// For a 3xx answer with a `Location`: the target, resolved against the request's URL (may
    /// hold secrets; never print it). The engine follows it per `RedirectPolicy`; a response
    /// handed back with it set is a redirect that was not followed.
    public var redirectTarget: String?
    /// Where redirects took the request, for messages (scheme, host, port and path: no
    /// credentials, no query); nil when it was not redirected.
    public var redirectedTo: String?
    /// The HTTP proxy from the environment that was sent this plain-http request and handed
    /// back this answer, which may then be its own (a proxy's refusal, its 502) rather than the
    /// server's; nil when the request went directly, through a tunnel (https) or through SOCKS.
    public var proxy: EnvironmentProxy?
    /// Whether the last redirect went to another origin where the request's credentials were
    /// not sent (`RedirectPolicy`): an error answer there refused a request without them.
    public var credentialsWithheld = false

    public init(head: HTTPResponseHead, bodyBytes: Int64, stoppedEarly: Bool, errorBody: String,
                uploadedBytes: Int64 = 0) {
        self.head = head
        self.bodyBytes = bodyBytes
        self.stoppedEarly = stoppedEarly
        self.errorBody = errorBody
        self.uploadedBytes = uploadedBytes
    }

    /// The answer as an error when it is not a 2xx; after a redirect, the error names where
    /// the request went too (the server that answered so).
    public func statusError(url: String) -> TransferError? {
        guard !head.isSuccess else { return nil }
        let error = TransferError.status(url: url, code: head.status,
                                         retryAfter: head.value("Retry-After").flatMap(RetryAfter.init(parsing:)),
                                         body: errorBody, proxy: proxy, credentialsWithheld: credentialsWithheld)
        return redirectedTo.map(error.redirected) ?? error
    }

    /// An error answer's body as a message quotes it: an HTML page by its title (`ErrorPage`),
    /// anything else `printable`.
    static func errorText(_ bytes: [UInt8]) -> String {
        guard let summary = ErrorPage.summary(String(decoding: bytes, as: UTF8.self)) else { return printable(bytes) }
        return printable(Array(summary.utf8))
    }

    /// Makes a response body printable: control characters become spaces, runs of white space
    /// fold to one, and the text is cut to `limit` characters.
    public static func printable(_ bytes: [UInt8], limit: Int = 300) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        var out = ""
        var pendingSpace = false
        var count = 0
        for scalar in text.unicodeScalars {
            let isControl = scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value)
            if isControl || scalar == " " {
                pendingSpace = !out.isEmpty
                continue
            }
            // Only a visible character past the limit proves that something is cut.
            if count + (pendingSpace ? 1 : 0) >= limit { return out + "…" }
            if pendingSpace { out.append(" "); count += 1; pendingSpace = false }
            out.unicodeScalars.append(scalar)
            count += 1
        }
        return out
    }
}
