/// When to retry a failed attempt and how long to wait first.
///
/// Retried: connection failures and timeouts (the network is often briefly down), 408 (the server
/// gave up waiting for us), 429 (rate limited: wait as told), and 5xx (server-side trouble that
/// usually passes). Not retried: other 4xx (asking again gets the same answer), the 5xx that say
/// what the server cannot do rather than that it is in trouble (`permanentServerStatuses`: 501
/// for a method it does not implement, 505, 506, 507, 508, 510, 511), TLS failures (a
/// certificate does not fix itself), local disk errors, protocol violations, and what the
/// proxy from the environment says of itself (a 407, a refused CONNECT, a SOCKS proxy that
/// wants credentials or refuses the server, a failed TLS handshake with an https proxy, a URL
/// curl cannot read or a name that does not resolve: it says the same until someone changes
/// the setting).
public struct RetryPolicy: Sendable {
    /// Retries allowed after the first attempt, counted only over attempts that made no progress.
    public var maxRetries: Int
    /// First backoff step in seconds; step n is `base * 2^n`, capped at `maxDelay`.
    public var baseDelay: Double
    public var maxDelay: Double
    /// The longest `Retry-After` honoured; a server asking for more fails the entry instead of
    /// stalling a cron job for hours.
    public var maxRetryAfter: Double

    public init(maxRetries: Int, baseDelay: Double = 0.5, maxDelay: Double = 30, maxRetryAfter: Double = 300) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// 5xx statuses that another attempt gets again (RFC 9110 §15.6, RFC 2295, RFC 4918,
    /// RFC 5842, RFC 2774, RFC 6585): Not Implemented (a PUT to a server that takes none), HTTP
    /// Version Not Supported, Variant Also Negotiates, Insufficient Storage, Loop Detected, Not
    /// Extended, Network Authentication Required (a captive portal waits for a person).
    public static let permanentServerStatuses: Set<Int> = [501, 505, 506, 507, 508, 510, 511]

    /// Whether an error is worth another attempt.
    public func isRetryable(_ error: TransferError) -> Bool {
        switch error {
        case .connection, .timedOut, .stalled:
            return true
        case .status(_, let code, _, _, _, _):
            return code == 408 || code == 429 || ((500...599).contains(code) && !Self.permanentServerStatuses.contains(code))
        case .tls, .proxy, .rangeNotHonoured, .invalidResponse, .local, .unreadableNetrc, .changedWhileSending, .redirect,
             .cancelled:
            return false
        }
    }

    /// Seconds to wait before retry number `attempt` (0-based): full jitter, i.e. uniform in
    /// `[0, min(maxDelay, base * 2^attempt)]`. When the server sent `Retry-After`, that wait plus
    /// up to one second of jitter (so that many clients told the same do not return at once).
    /// Returns nil when the server asks for a longer wait than `maxRetryAfter`.
    public func delay(attempt: Int, retryAfter: RetryAfter?, now: Int64,
                      random: (Double) -> Double = { Double.random(in: 0...$0) }) -> Double? {
        let ceiling = min(maxDelay, baseDelay * Double(1 << min(attempt, 30)))
        guard let retryAfter else { return random(ceiling) }
        let asked = Double(retryAfter.delay(now: now))
        if asked > maxRetryAfter { return nil }
        return asked + random(min(ceiling, 1.0))
    }
}
