import Foundation
import Testing

/// A proxy whose handshake fails before any request reaches the server: a SOCKS5 proxy that
/// wants credentials, refuses the server by its rules, or reports that the server refused it
/// (`RefusingProxy.start(socks5:)`), and an `https://` proxy that does not speak TLS. The
/// message names the variable and the proxy, never its password; what asking again cannot
/// change is not retried, and what can pass is.
@Suite(.timeLimit(.minutes(5)))
struct ProxyHandshakeTests {
    /// The harness clears proxies and sets `NO_PROXY=*`; this puts one back, and only one.
    static func environment(_ variable: String, _ value: String) -> [String: String] {
        var environment = ["http_proxy": "", "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": "",
                           "no_proxy": "", "NO_PROXY": ""]
        environment[variable] = value
        return environment
    }

    /// One download from a server that is never reached, with retries to spare.
    static func manifest(_ scheme: String, port: UInt16) -> String {
        """
        version: 1
        defaults: { retries: 2 }
        downloads:
          - { url: "\(scheme)://127.0.0.1:\(port)/f.bin", to: f.bin }
        """
    }

    @Test(arguments: [false, true])
    func aSocksProxyAskingForCredentialsIsNamedAndNotRetried(_ withPassword: Bool) async throws {
        let proxy = try await RefusingProxy.start(socks5: .auth)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest("https", port: try freePort()))
        let value = withPassword ? "socks5://user:proxy-secret@127.0.0.1:\(proxy.port)" : proxy.url
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("all_proxy", value))
        #expect(r.status == 1, "\(r.allOutput)")
        let item = try #require(try Self.item(r.stdout))
        #expect(item["error_code"] as? String == "proxy", "\(item)")
        let advice = withPassword ? "and it did not take the user:password@ in it: check them"
            : "and it asks for credentials: write them into all_proxy as user:password@ before the host"
        #expect((item["error"] as? String)?.contains("127.0.0.1:\(proxy.port) is the proxy set in all_proxy, \(advice)") == true,
                "\(item)")
        #expect((item["error"] as? String)?.contains("(not retried") == true, "\(item)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
        #expect(proxy.requests() == ["SOCKS5 AUTH"], "asked once: \(proxy.requests())")
    }

    @Test func aSocksProxyRefusingTheServerIsNamedAndNotRetried() async throws {
        let proxy = try await RefusingProxy.start(socks5: .notAllowed)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", Self.manifest("http", port: port))
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("all_proxy", proxy.url))
        #expect(r.status == 1, "\(r.allOutput)")
        let item = try #require(try Self.item(r.stdout))
        #expect(item["error_code"] as? String == "proxy", "\(item)")
        #expect((item["error"] as? String)?.contains("127.0.0.1:\(proxy.port) is the proxy set in all_proxy, and it refused "
            + "to connect to 127.0.0.1:\(port): ask whoever runs the proxy to allow that server") == true, "\(item)")
        #expect(proxy.requests() == ["SOCKS5 CONNECT 127.0.0.1:\(port)"], "asked once: \(proxy.requests())")
    }

    /// The server's port refused the proxy: as when syncr connects itself, a server that is
    /// restarting may take the next connection, so it is retried, and named as the proxy's word.
    @Test func aServerThatRefusedTheSocksProxyIsRetried() async throws {
        let proxy = try await RefusingProxy.start(socks5: .refused)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", Self.manifest("https", port: port))
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("all_proxy", proxy.url))
        #expect(r.status == 1, "\(r.allOutput)")
        let item = try #require(try Self.item(r.stdout))
        #expect(item["error_code"] as? String == "connection", "\(item)")
        #expect((item["error"] as? String)?.contains("127.0.0.1:\(proxy.port), the proxy set in all_proxy, could not connect "
            + "to 127.0.0.1:\(port)") == true, "\(item)")
        #expect((item["error"] as? String)?.contains("gave up after 2 retries") == true, "\(item)")
        #expect(proxy.requests().count == 3, "asked three times: \(proxy.requests())")
    }

    /// A server whose port refuses the SOCKS5 proxy's every connection is one nobody answers
    /// for, as when syncr's own connection is refused: once an entry has used up its retries
    /// on it, the run's other entries for it fail at once, saying so, instead of each asking
    /// three times.
    @Test func aServerThatRefusedTheSocksProxyCostsOneEntrysRetries() async throws {
        let proxy = try await RefusingProxy.start(socks5: .refused)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 2, jobs: 1 }
            downloads:
            \((0..<4).map { "  - { url: \"http://127.0.0.1:\(port)/f\($0).bin\", to: f\($0).bin }" }.joined(separator: "\n"))
            """)
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("all_proxy", proxy.url))
        #expect(r.status == 1, "\(r.allOutput)")
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let errors = ((report?["items"] as? [[String: Any]]) ?? []).map { $0["error"] as? String ?? "" }
        #expect(errors.count == 4, "\(r.allOutput)")
        let gaveUp = errors.filter { $0.contains("gave up after 2 retries") }
        let stopped = errors.filter { $0.contains("stopped: another entry used up its retries on this server") }
        #expect(gaveUp.count >= 1 && stopped.count >= 1 && gaveUp.count + stopped.count == 4, "\(errors)")
        #expect(proxy.requests().count == 3 * gaveUp.count, "only the entries that gave up asked: \(proxy.requests())")
    }

    /// `https://` written for a proxy that speaks plain HTTP: the TLS handshake that fails is
    /// the proxy's, not the server's, for an http URL (which has no TLS of its own) and for an
    /// https one (whose CONNECT never went out).
    @Test(arguments: ["http", "https"])
    func anHTTPSProxyWhoseHandshakeFailsIsNamedAndNotRetried(_ scheme: String) async throws {
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest(scheme, port: try freePort()))
        let variable = scheme + "_proxy"
        let value = "https://user:proxy-secret@127.0.0.1:\(proxy.port)"
        let r = try await harness.run(["apply", "--json"], environment: Self.environment(variable, value))
        #expect(r.status == 1, "\(r.allOutput)")
        let item = try #require(try Self.item(r.stdout))
        #expect(item["error_code"] as? String == "proxy", "\(item)")
        let message = item["error"] as? String ?? ""
        #expect(message.contains("TLS handshake with the proxy failed: "), "\(message)")
        #expect(message.contains("127.0.0.1:\(proxy.port) is the https proxy set in \(variable): if it speaks plain HTTP, "
            + "write its URL with http://"), "\(message)")
        #expect(message.contains("(not retried"), "\(message)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
    }

    static func item(_ stdout: String) throws -> [String: Any]? {
        let report = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
        return (report?["items"] as? [[String: Any]])?.first
    }
}
