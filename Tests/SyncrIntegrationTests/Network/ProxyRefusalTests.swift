import Foundation
import Testing

/// What the proxy from the environment says of itself (it asks for credentials, refuses the
/// server, cannot be used) fails the entry at once, naming the variable and what to change,
/// never the proxy's password. `RefusingProxy` answers every request, and counts them.
@Suite(.timeLimit(.minutes(5)))
struct ProxyRefusalTests {
    /// One entry, and the variable its proxy comes from.
    struct Case: Sendable, CustomStringConvertible {
        var scheme: String
        /// Whether the proxy's URL carries `user:proxy-secret@`.
        var withPassword: Bool
        var variable: String { scheme == "https" ? "https_proxy" : "http_proxy" }
        var description: String { scheme + (withPassword ? " with a password" : "") }
    }

    /// The harness clears proxies and sets `NO_PROXY=*`; this puts one back, and only one.
    static func environment(_ variable: String, _ value: String) -> [String: String] {
        var environment = ["http_proxy": "", "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": "",
            "no_proxy": "", "NO_PROXY": "",
            // For the s3:// entry: credentials to sign with, and no files to read them from.
            "AWS_ACCESS_KEY_ID": "SYNCRTESTACCESSKEY01", "AWS_SECRET_ACCESS_KEY": "not-a-secret-of-a-store",
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_REGION": "us-east-1",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_CONFIG_FILE": "/nonexistent/config"]
        environment[variable] = value
        return environment
    }

    /// A manifest with one download of `scheme` from a server that is never reached (the proxy
    /// answers in its stead), with retries to spare.
    static func manifest(_ scheme: String, port: UInt16) -> String {
        let entry = scheme == "s3" ? "{ url: \"s3://bucket/f.bin\", to: f.bin }"
            : "{ url: \"\(scheme)://127.0.0.1:\(port)/f.bin\", to: f.bin }"
        return """
            version: 1
            defaults: { retries: 3, s3: { endpoint: "http://127.0.0.1:\(port)", region: us-east-1 } }
            downloads:
              - \(entry)
            """
    }

    static let credentialCases = [Case(scheme: "https", withPassword: false), Case(scheme: "https", withPassword: true),
                                  Case(scheme: "http", withPassword: false), Case(scheme: "http", withPassword: true),
                                  Case(scheme: "s3", withPassword: false)]

    /// A 407 (to the CONNECT of an https URL, or to a plain-http request, an s3:// one
    /// included): one request, and a message that names the variable and `user:password@`.
    @Test(arguments: credentialCases)
    func aProxyAskingForCredentialsIsNamedAndNotRetried(_ c: Case) async throws {
        let proxy = try await RefusingProxy.start(status: 407)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest(c.scheme, port: try freePort()))
        let value = c.withPassword ? "http://user:proxy-secret@127.0.0.1:\(proxy.port)" : proxy.url
        let r = try await harness.run(["plan"], environment: Self.environment(c.variable, value))
        #expect(r.status == 1, "\(r.allOutput)")
        let named = "127.0.0.1:\(proxy.port) is the proxy set in \(c.variable)"
        let advice = c.withPassword ? "it did not take the user:password@ in it: check them"
            : "it asks for credentials: write them into \(c.variable) as user:password@ before the host"
        #expect(r.allOutput.contains("\(named), and \(advice)"), "\(r.allOutput)")
        #expect(r.allOutput.contains("(not retried: this will not change until the proxy or its setting does)"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("gave up after"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
        #expect(proxy.requests().count == 1, "asked once: \(proxy.requests())")
    }

    /// The JSON report gives the failure a code of its own, with the proxy's status.
    @Test func theReportSaysProxyWithItsStatus() async throws {
        let proxy = try await RefusingProxy.start(status: 407)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest("https", port: try freePort()))
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("https_proxy", proxy.url))
        #expect(r.status == 1, "\(r.allOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let item = try #require((report["items"] as? [[String: Any]])?.first)
        #expect(item["error_code"] as? String == "proxy", "\(item)")
        #expect(item["http_status"] as? Int == 407, "\(item)")
        #expect(proxy.requests().count == 1, "asked once: \(proxy.requests())")
    }

    /// A proxy that will not open a tunnel to the server (403 to the CONNECT) says so, once.
    @Test func aProxyRefusingTheServerIsNamedAndNotRetried() async throws {
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", Self.manifest("https", port: port))
        let r = try await harness.run(["plan"], environment: Self.environment("https_proxy", proxy.url))
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains("CONNECT tunnel failed, response 403; 127.0.0.1:\(proxy.port) is the proxy set in "
            + "https_proxy, and it refused to connect to 127.0.0.1:\(port): ask whoever runs the proxy to allow that server, "
            + "or list its host in no_proxy"), "\(r.allOutput)")
        #expect(r.allOutput.contains("(not retried"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("check the credentials"), "\(r.allOutput)")
        #expect(proxy.requests() == ["CONNECT 127.0.0.1:\(port) HTTP/1.1"], "\(proxy.requests())")
    }

    /// A plain-http request goes to the proxy whole, and a refusal may be the proxy's or the
    /// server's: the message names the proxy it went through and its variable (never the
    /// proxy's password), and says what to do either way. The code stays `http` (403), not
    /// retried as any 403.
    @Test(arguments: [false, true])
    func aPlainHTTPRefusalNamesTheProxyItCameThrough(_ withPassword: Bool) async throws {
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", Self.manifest("http", port: port))
        let value = withPassword ? "http://user:proxy-secret@127.0.0.1:\(proxy.port)" : proxy.url
        let r = try await harness.run(["apply", "--json"], environment: Self.environment("http_proxy", value))
        #expect(r.status == 1, "\(r.allOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let item = try #require((report["items"] as? [[String: Any]])?.first)
        #expect(item["error_code"] as? String == "http", "\(item)")
        #expect(item["http_status"] as? Int == 403, "\(item)")
        let message = try #require(item["error"] as? String)
        #expect(message.hasPrefix("http://127.0.0.1:\(port)/f.bin: HTTP 403 Forbidden through the proxy "
            + "127.0.0.1:\(proxy.port) set in http_proxy (the proxy or the server said: Proxy refused)"), "\(message)")
        #expect(message.contains("(the refusal may be the proxy's, 127.0.0.1:\(proxy.port) set in http_proxy: if so, "
            + "ask whoever runs it to allow this server, or list the server's host in no_proxy to connect to it directly; "
            + "if it is the server's, no credentials were sent; if the URL needs some, add headers:, user:password@ in the URL, "
            + "or netrc: true)"), "\(message)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
        #expect(proxy.requests() == ["GET http://127.0.0.1:\(port)/f.bin HTTP/1.1"], "\(proxy.requests())")
    }

    /// An `s3://` endpoint over plain http goes through the proxy as any plain-http request:
    /// a 403 that carries no S3 error may be the proxy's, and the message names the proxy as
    /// for http, with the store's advice after it; the code stays `object_store`. Neither the
    /// proxy's password nor the store's secret key is printed.
    @Test(arguments: ["plan", "apply"])
    func anObjectStoresRefusalNamesTheProxyItCameThrough(_ command: String) async throws {
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", Self.manifest("s3", port: port))
        let value = "http://user:proxy-secret@127.0.0.1:\(proxy.port)"
        let r = try await harness.run([command, "--json"], environment: Self.environment("http_proxy", value))
        #expect(r.status == 1, "\(r.allOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let item = try #require((report["items"] as? [[String: Any]])?.first)
        let message = (item["error"] as? String) ?? (item["reason"] as? String) ?? "\(item)"
        #expect(message.contains("s3://bucket/f.bin: HTTP 403 Forbidden through the proxy 127.0.0.1:\(proxy.port) set in "
            + "http_proxy (bucket bucket, key f.bin); the refusal may be the proxy's, 127.0.0.1:\(proxy.port) set in "
            + "http_proxy: if so, ask whoever runs it to allow this server"), "\(message)")
        #expect(message.contains("; if it is the store's, the credentials used: "), "\(message)")
        #expect(!r.allOutput.contains("proxy-secret") && !r.allOutput.contains("not-a-secret-of-a-store"), "\(r.allOutput)")
        if command == "apply" { #expect(item["error_code"] as? String == "object_store", "\(item)") }
    }

    /// A proxy URL curl cannot read, or whose name does not resolve: named by its variable,
    /// not retried, and the URL (which may carry a password) is not printed.
    @Test(arguments: [
        ("http://user:proxy-secret@[bad", "curl cannot read the proxy URL set in https_proxy: write it as http://host:port"),
        ("http://nonexistent.invalid:3128", "Could not resolve proxy: nonexistent.invalid, the proxy set in https_proxy: "
            + "correct the host name in https_proxy"),
    ])
    func anUnusableProxyIsNamedAndNotRetried(_ value: String, _ expected: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest("https", port: try freePort()))
        let r = try await harness.run(["plan"], environment: Self.environment("https_proxy", value))
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains(expected), "\(r.allOutput)")
        #expect(r.allOutput.contains("(not retried"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("gave up after"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
    }
}
