import Testing
import CCurl
@testable import SyncrHTTP

/// Which proxy variable libcurl reads for a URL, and when a failed connection was to it.
@Suite("EnvironmentProxy", .timeLimit(.minutes(10)))
struct EnvironmentProxyTests {
    private func proxy(_ scheme: String, _ variables: [String: String]) -> EnvironmentProxy? {
        EnvironmentProxy(scheme: scheme, environment: { variables[$0] })
    }

    @Test func httpReadsOnlyTheLowercaseVariable() {
        #expect(proxy("http", ["HTTP_PROXY": "http://evil:1"]) == nil)
        #expect(proxy("http", ["HTTP_PROXY": "http://evil:1", "ALL_PROXY": "p:2"])
                == EnvironmentProxy(variable: "ALL_PROXY", host: "p", port: 2))
        #expect(proxy("http", ["http_proxy": "http://p:3128"]) == EnvironmentProxy(variable: "http_proxy", host: "p", port: 3128))
    }

    @Test func httpsReadsBothCasesThenAllProxy() {
        #expect(proxy("https", ["HTTPS_PROXY": "P.example:8080"]) == EnvironmentProxy(variable: "HTTPS_PROXY", host: "p.example", port: 8080))
        #expect(proxy("https", ["https_proxy": "a:1", "HTTPS_PROXY": "b:2"])?.variable == "https_proxy")
        #expect(proxy("https", ["https_proxy": "", "all_proxy": "c:3"])?.variable == "all_proxy", "an empty variable is unset")
        #expect(proxy("https", [:]) == nil)
    }

    @Test func addressesAsCurlReadsThem() {
        #expect(EnvironmentProxy.address("http://user:pa:ss@proxy:3128/") ?? ("", 0) == ("proxy", 3128))
        #expect(EnvironmentProxy.address("proxy") ?? ("", 0) == ("proxy", 1080), "curl's default proxy port")
        #expect(EnvironmentProxy.address("https://proxy") ?? ("", 0) == ("proxy", 443))
        #expect(EnvironmentProxy.address("socks5h://[::1]:1085") ?? ("", 0) == ("::1", 1085))
        #expect(EnvironmentProxy.address("http://proxy:port") == nil)
        #expect(EnvironmentProxy.address("http://") == nil)
    }

    /// The hints name the variable and the address, an IPv6 one in brackets, never the URL.
    @Test func hintsNameTheVariableAndTheAddress() {
        let p = EnvironmentProxy(variable: "https_proxy", host: "127.0.0.1", port: 9)
        #expect(p.unreachableHint == "127.0.0.1:9 is the proxy set in https_proxy: check that it runs there, "
                + "or list this server's host in no_proxy to connect to it directly")
        #expect(p.unansweredHint(target: "example.com:443") == "127.0.0.1:9 is the proxy set in https_proxy, which took "
                + "the connection and gave no answer in time: check that it can reach example.com:443, or list this "
                + "server's host in no_proxy to connect to it directly")
        let v6 = EnvironmentProxy(variable: "all_proxy", written: "socks5://user:secret@[::1]:1080")
        #expect(v6?.unreachableHint.hasPrefix("[::1]:1080 is the proxy set in all_proxy: ") == true)
        #expect(v6?.unreachableHint.contains("secret") == false)
    }

    @Test func credentialsInAProxyURL() {
        #expect(Transfer.carriesCredentials("http://user:pw@proxy:3128"))
        #expect(Transfer.carriesCredentials("user@proxy"))
        #expect(!Transfer.carriesCredentials("http://proxy:3128/a@b"))
        #expect(!Transfer.carriesCredentials("proxy:3128"))
    }

    /// What the proxy says of itself does not change by asking again.
    @Test func proxyFailuresAreNotRetried() {
        let policy = RetryPolicy(maxRetries: 5)
        let failure = TransferError.proxy(url: "https://h/f", status: 407, message: "m")
        #expect(!policy.isRetryable(failure))
        #expect(!policy.isRetryable(failure, method: .put, requestSent: false))
        #expect(!policy.isRetryable(failure, method: .post, requestSent: false))
    }

    /// Only a SOCKS5 proxy's word that the server's port refused it is a refused connection,
    /// as unreachable as a direct one; a SOCKS4 proxy's "rejected or failed" and a host the
    /// proxy found unreachable are not.
    @Test func aRefusalThroughASocksProxyIsARefusedConnection() {
        #expect(Transfer.connectionCode(CURLPX_REPLY_CONNECTION_REFUSED) == CURLE_COULDNT_CONNECT)
        #expect(TransferError.connection(url: "u", code: Int(CURLE_COULDNT_CONNECT.rawValue), message: "m").isUnreachable)
        for other in [CURLPX_REQUEST_FAILED, CURLPX_REPLY_HOST_UNREACHABLE, CURLPX_REPLY_GENERAL_SERVER_FAILURE, CURLPX_CLOSED] {
            #expect(Transfer.connectionCode(other) == CURLE_PROXY)
            #expect(!TransferError.connection(url: "u", code: Int(Transfer.connectionCode(other).rawValue), message: "m").isUnreachable)
        }
    }

    /// A SOCKS handshake's failure by `CURLINFO_PROXY_ERROR`: credentials and refusals are
    /// the proxy's to the end (not retried); the server unreachable from it, or a handshake
    /// cut short, may pass (retried).
    @Test func socksHandshakeFailuresBySteps() {
        #expect(Transfer.handshakeStep(CURLPX_NO_AUTH) == .credentials)
        #expect(Transfer.handshakeStep(CURLPX_USER_REJECTED) == .credentials)
        #expect(Transfer.handshakeStep(CURLPX_REPLY_NOT_ALLOWED) == .refused)
        #expect(Transfer.handshakeStep(CURLPX_BAD_VERSION) == .notThatKind)
        #expect(Transfer.handshakeStep(CURLPX_REPLY_CONNECTION_REFUSED) == .passing)
        #expect(Transfer.handshakeStep(CURLPX_REPLY_HOST_UNREACHABLE) == .passing)
        #expect(Transfer.handshakeStep(CURLPX_REQUEST_FAILED) == .passing)
        #expect(Transfer.handshakeStep(CURLPX_CLOSED) == .passing)
        #expect(Transfer.handshakeStep(CURLPX_OK) == .passing)
    }

    /// The kind of proxy, by its URL's scheme: only an HTTP(S) one takes plain-http requests
    /// whole and may answer them itself.
    @Test func schemesOfProxyURLs() {
        #expect(EnvironmentProxy(variable: "all_proxy", written: "SOCKS5H://s:1")?.scheme == "socks5h")
        #expect(EnvironmentProxy(variable: "all_proxy", written: "s:1")?.scheme == "http")
        #expect(EnvironmentProxy(variable: "all_proxy", written: "https://s")?.forwardsRequests == true)
        #expect(EnvironmentProxy(variable: "all_proxy", written: "socks4a://s")?.forwardsRequests == false)
    }
}
