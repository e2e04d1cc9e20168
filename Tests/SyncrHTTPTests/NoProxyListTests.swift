import Testing
@testable import SyncrHTTP

/// `no_proxy` as libcurl 8 reads it (its lib/noproxy.c and unit test 1614), which syncr now
/// decides itself for every request: names and their subdomains, IPv4 and IPv6 addresses and
/// ranges, `[::1]` as a URL writes it, `*`.
@Suite("NoProxyList", .timeLimit(.minutes(10)))
struct NoProxyListTests {
    @Test(arguments: [
        // The forms a no_proxy list is written with.
        ("[::1]", "::1", true), ("::1", "::1", true), ("[::1]", "[::1]", true), ("[::2]", "::1", false),
        ("[fd00::5]", "fd00::/8", true), ("[fd12:3456::1]", "fd00::/8", true), ("[fe80::1]", "fd00::/8", false),
        ("[fd00::5]", "[fd00::]/8", true), ("[FD00::5]", "fd00::/8", true),
        ("10.1.2.3", "10.0.0.0/8", true), ("11.1.2.3", "10.0.0.0/8", false), ("10.1.2.3", "10.1.2.3", true),
        ("www.example.com", ".example.com", true), ("example.com", ".example.com", true),
        ("www.example.com", "example.com", true), ("notexample.com", "example.com", false),
        ("Example.COM.", "example.com.", true), ("example.org", "example.com", false),
        ("anything", "*", true), ("[::1]", "*", true), ("10.0.0.1", "*", true),
        // Lists: commas, blanks, empty entries.
        ("[::1]", "localhost, 127.0.0.1, ::1", true), ("b.example", "a.example,,b.example,", true),
        ("b.example", "a.example b.example", true), ("c.example", "a.example, b.example", false),
        // As curl's unit test 1614 has them.
        ("192.168.0.1", "192.168.0.0/16", true), ("192.168.0.1", "192.168.0.0/16a", false),
        ("192.168.0.1", "192.168.0.0/24", true), ("192.168.0.1", "192.168.0.0/32", false),
        ("192.168.0.1", "192.168.0.1/33", false), ("192.168.0.1", "192.168.0.0", false),
        ("192.168.1.1", "foo, bar, 192.168.0.0/16", true), ("[::1]", "foo, bar, 192.168.0.0/16", false),
        ("[::1]", "::1/64", true), ("[::1]", "::1/129", false), ("[::1]", "::1/a127", false),
        ("[2001:db8:8000::1]", "2001:db8::/65", false), ("[2001:db8::1]", "2001:db8::/65", true),
        ("[2001:db8::1]", "2001:db8::/72", true), ("[2001:db8:8000::1]", "2001:db8::/72", false),
        ("127.0.0.1", "127.0.0.1/8,localhost,", true), ("localhost", "127.0.0.1,localhost", true),
        // An address is never matched as a name, nor a name as an address.
        ("10.0.0.1", ".0.1", false), ("example.com", "10.0.0.0/8", false), ("[::1]", "", false),
        // A zone names the interface, not the address.
        ("[fe80::1%25eth0]", "fe80::/10", true),
    ])
    func matchesAsCurlDoes(_ host: String, _ list: String, _ exempt: Bool) {
        #expect(NoProxyList(list).exempts(host: host) == exempt, "no_proxy=\(list) for \(host)")
    }

    @Test func aStarInAListIsAName() {
        // curl takes `*` only as the whole list.
        #expect(!NoProxyList("a.example,*").exempts(host: "b.example"))
    }

    /// The proxy for a URL: its scheme's variable (never HTTP_PROXY), else all_proxy, unless
    /// no_proxy (else NO_PROXY) lists its host.
    @Test func routeFollowsTheVariablesAndNoProxy() {
        let environment = ProxyEnvironment {
            ["http_proxy": "http://user:pw@proxy:3128", "HTTP_PROXY": "http://evil:1", "all_proxy": "socks5h://s:1080",
             "no_proxy": "::1,fd00::/8,.internal", "NO_PROXY": "*"][$0]
        }
        let http = environment.route(for: "http://example.com/f")
        #expect(http?.variable == "http_proxy")
        #expect(http?.written == "http://user:pw@proxy:3128")
        #expect(http?.proxy == EnvironmentProxy(variable: "http_proxy", host: "proxy", port: 3128))
        #expect(environment.route(for: "https://example.com/f")?.proxy
                == EnvironmentProxy(variable: "all_proxy", host: "s", port: 1080, scheme: "socks5h"))
        #expect(environment.route(for: "http://[::1]:8080/f") == nil)
        #expect(environment.route(for: "http://[fd00::1]/f") == nil)
        #expect(environment.route(for: "http://files.internal/f") == nil)
        #expect(environment.route(for: "http://[fe80::1]/f") != nil, "no_proxy is read; NO_PROXY only when it is unset")
        #expect(ProxyEnvironment { ["http_proxy": "p:1", "NO_PROXY": "*"][$0] }.route(for: "http://h/") == nil)
        #expect(ProxyEnvironment { ["HTTP_PROXY": "p:1"][$0] }.route(for: "http://h/") == nil)
        #expect(ProxyEnvironment.none.route(for: "http://h/") == nil)
    }

    /// Only an HTTP proxy, sent a plain-http request, may answer in the server's stead.
    @Test func onlyAnHTTPProxyForwardsPlainHTTP() {
        let environment = ProxyEnvironment { ["http_proxy": "https://p:3129", "https_proxy": "p:3128", "all_proxy": "socks5://s"][$0] }
        #expect(environment.route(for: "http://h/f")?.forwarder(scheme: "http")?.scheme == "https")
        #expect(environment.route(for: "https://h/f")?.forwarder(scheme: "https") == nil, "a tunnel")
        let socks = ProxyEnvironment { ["all_proxy": "socks5://s"][$0] }
        #expect(socks.route(for: "http://h/f")?.forwarder(scheme: "http") == nil, "SOCKS relays bytes")
    }
}
