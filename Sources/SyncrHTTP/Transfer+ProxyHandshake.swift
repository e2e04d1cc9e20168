import CCurl

/// A SOCKS proxy's handshake that failed (`CURLE_PROXY`, with `CURLINFO_PROXY_ERROR` saying
/// which step, curl >= 7.73): curl's message alone ("Can't complete SOCKS5 connection to
/// example.com. (5)") named neither the variable nor what to change, and was retried as a
/// broken connection whatever the step.
extension Transfer {
    /// What the handshake's failure is, by curl's `CURLproxycode`: a refusal that asking again
    /// gets again is `TransferError.proxy` (never retried); trouble between the proxy and the
    /// server, or a handshake cut short, is `TransferError.connection` (retried) naming the proxy.
    ///
    /// The server's port refusing the proxy (`CURLPX_REPLY_CONNECTION_REFUSED`) is retried, as
    /// it is when syncr connects itself: the proxy did its part and reports the server's
    /// state, and a server that is restarting takes connections again a moment later. So are
    /// an unreachable host or network, a failure of the proxy's own, a server name the proxy
    /// (or, for `socks4://`, curl) cannot resolve, and a connection to the proxy that closed
    /// mid-handshake: each can pass. A refusal counts toward a server nobody answers for as a
    /// refused direct connection does (`connectionCode`).
    /// - Parameter sentCredentials: the proxy's URL carries `user:password@`.
    func handshakeFailure(_ proxy: EnvironmentProxy, detail: String, sentCredentials: Bool) -> TransferError {
        var step = 0
        syncr_easy_getinfo_long(easy, CURLINFO_PROXY_ERROR, &step)
        let url = request.displayURL
        let code = CURLproxycode(rawValue: UInt32(step))
        switch Self.handshakeStep(code) {
        case .credentials:
            return .proxy(url: url, status: nil,
                          message: "\(detail); \(proxy.credentialsAdvice(sentCredentials: sentCredentials))")
        case .refused:
            return .proxy(url: url, status: nil, message: "\(detail); \(proxy.refusalAdvice(target: targetAddress))")
        case .notThatKind:
            return .proxy(url: url, status: nil, message: "\(detail); \(proxy.kindAdvice)")
        case .passing:
            return .connection(url: url, code: Int(Self.connectionCode(code).rawValue), message: "\(detail); \(proxy.endpoint), "
                + "the proxy set in \(proxy.variable), could not connect to \(targetAddress)")
        }
    }

    /// The curl code a handshake that may pass is given as: `CURLE_PROXY`, but
    /// `CURLE_COULDNT_CONNECT` where the proxy says that the server's port refused it (a
    /// SOCKS5 reply 5, RFC 1928 §6, which curl reports as `CURLPX_REPLY_CONNECTION_REFUSED`):
    /// the fact that code states of a direct connection, so a server that refuses every
    /// connection counts as one nobody answers for (`TransferError.isUnreachable`), through a
    /// proxy as without. A SOCKS4 proxy's refusal does not count: its one failure reply (91,
    /// `CURLPX_REQUEST_FAILED`) says "rejected or failed" alike for its own rules, a server it
    /// could not reach and a port that refused it. Nor does a server the proxy found
    /// unreachable (replies 3, 4, `CURLPX_REPLY_HOST_UNREACHABLE`): a route may be down for a
    /// moment where a refusal is the server's own answer.
    static func connectionCode(_ code: CURLproxycode) -> CURLcode {
        code == CURLPX_REPLY_CONNECTION_REFUSED ? CURLE_COULDNT_CONNECT : CURLE_PROXY
    }

    /// How a proxy's handshake failed, as far as what to do about it goes.
    enum HandshakeStep: Equatable {
        /// It wants a user name and password it was not given, or did not take those it was.
        case credentials
        /// Its rules refuse the server, or the request in the form curl put it.
        case refused
        /// It did not answer as the kind of proxy its URL's scheme says.
        case notThatKind
        /// Something that may pass: the server unreachable from it, or the handshake cut short.
        case passing
    }

    /// The kind of failure each `CURLproxycode` is (CURLINFO_PROXY_ERROR(3)).
    static func handshakeStep(_ code: CURLproxycode) -> HandshakeStep {
        switch code {
        case CURLPX_NO_AUTH, CURLPX_USER_REJECTED, CURLPX_LONG_USER, CURLPX_LONG_PASSWD,
             CURLPX_IDENTD, CURLPX_IDENTD_DIFFER:
            return .credentials
        case CURLPX_REPLY_NOT_ALLOWED, CURLPX_REPLY_COMMAND_NOT_SUPPORTED,
             CURLPX_REPLY_ADDRESS_TYPE_NOT_SUPPORTED, CURLPX_BAD_ADDRESS_TYPE, CURLPX_LONG_HOSTNAME:
            return .refused
        case CURLPX_BAD_VERSION, CURLPX_UNKNOWN_MODE, CURLPX_GSSAPI, CURLPX_GSSAPI_PERMSG, CURLPX_GSSAPI_PROTECTION:
            return .notThatKind
        default:
            // CURLPX_REPLY_CONNECTION_REFUSED, _HOST_UNREACHABLE, _NETWORK_UNREACHABLE,
            // _TTL_EXPIRED, _GENERAL_SERVER_FAILURE, _UNASSIGNED, CURLPX_RESOLVE_HOST, the
            // CURLPX_SEND_* and CURLPX_RECV_* of a connection that broke, CURLPX_CLOSED,
            // CURLPX_UNKNOWN_FAIL and CURLPX_OK (no detail given). CURLPX_REQUEST_FAILED too:
            // a SOCKS4 proxy answers "rejected or failed" (91) alike for a rule that refuses
            // and for a server it could not reach, and a retry spent on a refusal costs less
            // than a run failed for a server that came back.
            return .passing
        }
    }
}
