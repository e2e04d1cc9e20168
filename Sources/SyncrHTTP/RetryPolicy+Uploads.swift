extension RetryPolicy {
    /// Whether an attempt at a request with this method is worth another.
    ///
    /// PUT (like GET and HEAD) is idempotent (RFC 9110 §9.2.2): sending it again leaves the
    /// server as one success would, so it follows `isRetryable(_:)`. A POST may have been acted on
    /// even when its answer never arrived, so it is retried only when the request certainly did
    /// not reach the server (`TransferOutcome.requestSent` is false: no name, refused, connect
    /// timeout), or when the server answered with a status that says it did not act on it:
    /// 408 (it gave up before the request was complete, RFC 9110 §15.5.9), 429 (rate limited,
    /// RFC 6585 §4) and 503 (unable to handle it, RFC 9110 §15.6.4). A 500 or 502 may come after
    /// the server acted, so a POST answered with one is not sent again.
    public func isRetryable(_ error: TransferError, method: HTTPRequest.Method, requestSent: Bool) -> Bool {
        guard method == .post else { return isRetryable(error) }
        switch error {
        case .connection, .timedOut, .stalled:
            return !requestSent
        case .status(_, let code, _, _, _, _):
            return code == 408 || code == 429 || code == 503
        case .tls, .proxy, .rangeNotHonoured, .invalidResponse, .local, .unreadableNetrc, .changedWhileSending, .redirect,
             .cancelled:
            return false
        }
    }
}
