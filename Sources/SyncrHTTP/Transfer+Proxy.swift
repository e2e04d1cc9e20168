import CCurl

/// Failures that are the proxy's from the environment, not the server's (`TransferError.proxy`):
/// curl words them as it words a broken connection ("CONNECT tunnel failed, response 407",
/// "Could not resolve proxy"), which named neither the proxy's variable nor what to change,
/// and the retry loop asked again for nothing.
extension Transfer {
    /// The failure `code` (`detail`: curl's message) as the proxy's, when it is: the proxy's
    /// name does not resolve or its URL cannot be read (`CURLE_COULDNT_RESOLVE_PROXY` covers
    /// both), its handshake failed (a SOCKS proxy's, `CURLE_PROXY`; the TLS handshake with an
    /// `https://` proxy), or it answered the CONNECT of an https request with an error
    /// (`CURLINFO_HTTP_CONNECTCODE`). Nil for any other failure, and for a request that went
    /// directly (`route` nil).
    func proxyFailure(_ code: CURLcode, detail: String) -> TransferError? {
        guard let route else { return nil }
        let url = request.displayURL
        if code == CURLE_COULDNT_RESOLVE_PROXY {
            return .proxy(url: url, status: nil, message: EnvironmentProxy.unusableAdvice(variable: route.variable, detail: detail))
        }
        guard let proxy = route.proxy else { return nil }
        if code == CURLE_PROXY { return handshakeFailure(proxy, detail: detail, sentCredentials: Self.carriesCredentials(route.written)) }
        var status = 0
        syncr_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &status)
        if status == 0, proxy.scheme == "https", Self.tlsCodes.contains(code) {
            // No answer to a CONNECT (nor a plain-http request, which has no TLS of its own):
            // the handshake that failed was the one with the proxy, not with the server.
            return .proxy(url: url, status: nil, message: proxy.tlsAdvice(detail: detail))
        }
        guard status >= 300 else { return nil }
        let target = targetAddress
        switch status {
        case 407:
            let advice = proxy.credentialsAdvice(sentCredentials: Self.carriesCredentials(route.written))
            return .proxy(url: url, status: status, message: "\(detail); \(advice)")
        case 400..<500 where status != 408 && status != 429:
            return .proxy(url: url, status: status, message: "\(detail); \(proxy.refusalAdvice(target: target))")
        default:
            // A 5xx (or a wait) may pass, like a server's: retried, but the answer is named as
            // the proxy's, which curl's words do not tell.
            return .connection(url: url, code: Int(code.rawValue), message: "\(detail); \(proxy.endpoint), "
                + "the proxy set in \(proxy.variable), answered so when asked to connect to \(target)")
        }
    }

    /// curl's failures of a TLS handshake (as `error(for:)` sorts them).
    static let tlsCodes = [CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
                           CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
                           CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS]

    /// `host:port` of the server this request was for, as a proxy was asked to reach it.
    var targetAddress: String {
        guard let parts = effectiveParts else { return "the server" }
        return "\(parts.host):\(parts.port)"
    }

    /// A 407 answer to a plain-http request: only a proxy sends one (RFC 9110 §15.5.8), and it
    /// asks for credentials that the proxy's URL does not carry (or carries wrong). `body`:
    /// the start of the proxy's answer.
    func proxyAuthenticationRequired(body: String) -> TransferError {
        let said = "HTTP 407 Proxy Authentication Required" + (body.isEmpty ? "" : " (proxy said: \(body))")
        let url = request.displayURL
        guard let route, let proxy = route.proxy else {
            // No proxy of ours: one on the way that syncr was not told about (a transparent one).
            let scheme = effectiveParts?.scheme ?? "http"
            return .proxy(url: url, status: 407, message: "\(said); a proxy on the way asks for credentials: "
                + "set \(scheme)_proxy to it, with user:password@ before its host")
        }
        let advice = proxy.credentialsAdvice(sentCredentials: Self.carriesCredentials(route.written))
        return .proxy(url: url, status: 407, message: "\(said); \(advice)")
    }

    /// Whether a proxy URL as written (`[scheme://][user[:password]@]host[:port]`) carries
    /// user information, which curl sends as `Proxy-Authorization`.
    static func carriesCredentials(_ written: String) -> Bool {
        let rest = written.range(of: "://").map { written[$0.upperBound...] } ?? Substring(written)
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.contains("@")
    }
}
