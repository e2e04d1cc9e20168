import Foundation
import Testing

/// `http_proxy` / `no_proxy` through a real tinyproxy, `netrc: true`, and passwords written in
/// URLs, which must never be printed.
@Suite(.timeLimit(.minutes(5)))
struct ProxyAndCredentialTests {
    static func server() async throws -> (TemporaryDirectory, FaultServer, Data) {
        let folder = try TemporaryDirectory(prefix: "proxy")
        let root = try folder.makeDirectory("root")
        let content = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try content.write(to: root.appendingPathComponent("file.bin"))
        return (folder, try await FaultServer.start(root: root), content)
    }

    /// The harness clears proxies and sets `NO_PROXY=*`; these put a proxy back.
    static func proxied(_ proxy: Tinyproxy, noProxy: String = "") -> [String: String] {
        ["http_proxy": proxy.url, "HTTP_PROXY": proxy.url, "no_proxy": noProxy, "NO_PROXY": noProxy]
    }

    @Test func httpProxyCarriesTheRequests() async throws {
        let (folder, server, content) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let proxy = try await Tinyproxy.start()
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: Self.proxied(proxy))
        #expect(r.status == 0, "\(r.stderr)\n\(proxy.log())")
        #expect(FileManager.default.contents(atPath: harness.folder + "/file.bin") == content)
        let headers = try await server.stats()["/file.bin"].headers
        #expect(!headers.isEmpty)
        #expect(headers.allSatisfy { $0["via"]?.contains("tinyproxy") == true }, "every request came through the proxy: \(headers)")
    }

    @Test func noProxyBypassesTheProxy() async throws {
        let (folder, server, content) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let proxy = try await Tinyproxy.start()
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: Self.proxied(proxy, noProxy: "127.0.0.1"))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: harness.folder + "/file.bin") == content)
        let headers = try await server.stats()["/file.bin"].headers
        #expect(!headers.isEmpty)
        #expect(headers.allSatisfy { $0["via"] == nil }, "no request went through the proxy: \(headers)")
    }

    /// A proxy that is not running: the error says that the address curl could not reach is
    /// the proxy, and from which variable, without the password its URL carries.
    @Test func aDeadProxyIsNamed() async throws {
        let (folder, server, _) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let dead = try freePort()
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))", to: file.bin }
            """)
        let proxy = "http://user:proxy-secret@127.0.0.1:\(dead)"
        let r = try await harness.run(["apply"], environment: ["http_proxy": proxy, "no_proxy": "", "NO_PROXY": ""])
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains("127.0.0.1:\(dead) is the proxy set in http_proxy: check that it runs there"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
    }

    /// A proxy that never answers the connection (its accept queue is full, so the kernel drops
    /// the SYN): the timeout names the proxy too, as the man page says.
    @Test func aProxyThatNeverAnswersIsNamed() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try #require(bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                             && getsockname(listener, $0, &length) == 0)
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // Connections that are never accepted fill the queue; they stay open while the test runs.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<3 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            held.append(client)
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) } }
        }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, timeout: 2s }
            downloads:
              - { url: "http://127.0.0.2:9/file.bin", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "", "NO_PROXY": ""])
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains("timed out") && r.allOutput.contains("127.0.0.1:\(port) is the proxy set in http_proxy"),
                "\(r.allOutput)")
    }

    /// https through the proxy: a CONNECT tunnel, with the certificate still checked end to end
    /// (the private CA is trusted with `ca_cert`).
    @Test func httpsProxyTunnelsTLS() async throws {
        let certificates = try await TestCertificates.make()
        let root = try certificates.directory.makeDirectory("root")
        let content = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        try content.write(to: root.appendingPathComponent("file.bin"))
        let nginx = try await Nginx.start(root: root, options: .init(tls: certificates.server))
        defer { nginx.stop() }
        let proxy = try await Tinyproxy.start()
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try FileManager.default.copyItem(atPath: certificates.caCertificate.path, toPath: harness.folder + "/ca.pem")
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, ca_cert: ca.pem }
            downloads:
              - { url: "\(nginx.url("/file.bin"))", to: file.bin }
            """)
        let environment = ["https_proxy": proxy.url, "HTTPS_PROXY": proxy.url, "no_proxy": "", "NO_PROXY": ""]
        let r = try await harness.run(["apply"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)\n\(proxy.log())")
        #expect(FileManager.default.contents(atPath: harness.folder + "/file.bin") == content)
        #expect(proxy.log().contains("CONNECT 127.0.0.1:\(nginx.port)"), "\(proxy.log())")
    }

    /// `netrc: true` reads `~/.netrc` (HOME points at a folder of the test's); without it the
    /// file is not consulted.
    @Test func netrcSuppliesCredentialsOnlyWhenAsked() async throws {
        let (folder, server, _) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let harness = try CLIHarness()
        let home = try TemporaryDirectory(prefix: "home")
        let netrc = home.appending(".netrc")
        try "machine 127.0.0.1 login bob password netrc-pw-42\n".write(to: netrc, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: netrc.path)
        let expected = "Basic " + Data("bob:netrc-pw-42".utf8).base64EncodedString()

        for (flag, wanted) in [("false", nil), ("true", expected)] as [(String, String?)] {
            try await server.reset()
            try harness.write("syncr.yml", """
                version: 1
                defaults: { retries: 0, netrc: \(flag) }
                downloads:
                  - { url: "\(server.url("/file.bin"))", to: file-\(flag).bin }
                """)
            let r = try await harness.run(["apply"], environment: ["HOME": home.path])
            #expect(r.status == 0, "\(r.stderr)")
            let headers = try await server.stats()["/file.bin"].headers
            #expect(!headers.isEmpty)
            #expect(headers.allSatisfy { $0["authorization"] == wanted }, "netrc: \(flag): \(headers)")
            #expect(!r.allOutput.contains("netrc-pw-42"))
            #expect(!r.stderr.contains("netrc_unreadable") && !r.stderr.contains("cannot be read"), "\(r.stderr)")
        }
        // A netrc file that is not there (a mistyped NETRC) is said, in plan and at the start
        // of apply: curl sends no credentials and says nothing.
        let missing = home.appending("no-such-netrc").path
        let plan = try await harness.run(["plan", "--json"], environment: ["HOME": home.path, "NETRC": missing])
        #expect(plan.stdout.contains("netrc: true, but \(missing) cannot be read (No such file or directory)"), "\(plan.stdout)")
        let apply = try await harness.run(["apply"], environment: ["HOME": home.path, "NETRC": missing])
        #expect(apply.stderr.contains("syncr: warning: netrc: true, but \(missing) cannot be read"), "\(apply.stderr)")
        // A folder opens as well, and curl reads nothing from it.
        let aFolder = try await harness.run(["plan"], environment: ["HOME": home.path, "NETRC": home.path])
        #expect(aFolder.stdout.contains("netrc: true, but \(home.path) cannot be read (Is a directory)"), "\(aFolder.stdout)")
    }

    /// A presigned URL written into the manifest: its signature and credential are masked in
    /// every output and record, like a password, while the download itself uses them.
    @Test func queryTokensAreNeverPrinted() async throws {
        let (folder, server, content) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let harness = try CLIHarness()
        let query = "X-Amz-Credential=AKIAQUERYTOKEN%2F20261129&X-Amz-Signature=5ec12e7deadbeef0&v=1"
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))?\(query)", to: file.bin }
              - { url: "\(server.url("/missing.bin"))?\(query)", to: missing.bin }
            uploads:
              - { from: file.bin, to: "\(server.url("/up/file.bin"))?\(query)", method: put }
            """)
        var outputs: [String] = []
        for arguments in [["validate"], ["plan"], ["plan", "--json"], ["apply"], ["apply", "--json"], ["cache"]] {
            let r = try await harness.run(arguments)
            outputs.append(r.allOutput)
            for secret in ["5ec12e7deadbeef0", "AKIAQUERYTOKEN"] {
                #expect(!r.allOutput.contains(secret), "\(arguments): \(r.allOutput)")
            }
        }
        #expect(outputs[3].contains("/missing.bin?X-Amz-Credential=***&X-Amz-Signature=***&v=1"), "\(outputs[3])")
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.folder + "/file.bin")) == content)
        let cache = harness.folder + "/.syncr/cache"
        for name in try FileManager.default.contentsOfDirectory(atPath: cache) where !name.hasSuffix(".data") {
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: cache + "/" + name)), as: UTF8.self)
            #expect(!text.contains("5ec12e7deadbeef0") && !text.contains("AKIAQUERYTOKEN"), "\(name) keeps the token")
        }
    }

    /// A token in a URL carried in another parameter's value (a redirect's `?to=`), encoded
    /// once, twice or not at all, is masked by its name in every output and record too.
    @Test func tokensInNestedURLsAreNeverPrinted() async throws {
        let (folder, server, content) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let harness = try CLIHarness()
        let once = "to=https%3A%2F%2Fcdn.example%2Ff%3Ftoken%3DNESTED0NCE99%26x%3D1"
        let twice = "u=https%3A%2F%2Fb%2Fdl%3Fto%3Dhttps%253A%252F%252Fcdn%252Ff%253Fsig%253DNESTEDTW1CE99%2526v%253D1"
        let plain = "to=https://cdn.example/f?token=NESTEDPLA1N99"
        let password = "next=https%3A%2F%2Fuser%3ANESTEDPA55W0RD%40cdn.example%2Ff"
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))?\(once)", to: file.bin }
              - { url: "\(server.url("/missing.bin"))?\(twice)", to: missing.bin }
              - { url: "\(server.url("/gone.bin"))?\(plain)", to: gone.bin }
              - { url: "\(server.url("/away.bin"))?\(password)", to: away.bin }
            """)
        let secrets = ["NESTED0NCE99", "NESTEDTW1CE99", "NESTEDPLA1N99", "NESTEDPA55W0RD"]
        var outputs: [String] = []
        for arguments in [["validate"], ["plan"], ["plan", "--json"], ["apply", "--report", "r.json"], ["apply", "--json"], ["cache"]] {
            let r = try await harness.run(arguments)
            outputs.append(r.allOutput)
            #expect(!secrets.contains { r.allOutput.contains($0) }, "\(arguments): \(r.allOutput)")
        }
        #expect(outputs[3].contains("/missing.bin?u=https%3A%2F%2Fb%2Fdl%3Fto%3Dhttps%253A%252F%252Fcdn%252Ff%253Fsig%253D***%2526v%253D1"),
                "\(outputs[3])")
        #expect(outputs[3].contains("/gone.bin?to=https://cdn.example/f?token=***"), "\(outputs[3])")
        #expect(outputs[3].contains("/away.bin?next=https%3A%2F%2Fuser%3A***%40cdn.example%2Ff"), "\(outputs[3])")
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.folder + "/file.bin")) == content)
        let report = String(decoding: try Data(contentsOf: URL(fileURLWithPath: harness.folder + "/r.json")), as: UTF8.self)
        #expect(report.contains("f%3Ftoken%3D***%26x%3D1"), "\(report)")
        #expect(!secrets.contains { report.contains($0) }, "\(report)")
        let cache = harness.folder + "/.syncr/cache"
        for name in try FileManager.default.contentsOfDirectory(atPath: cache) where !name.hasSuffix(".data") {
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: cache + "/" + name)), as: UTF8.self)
            #expect(!secrets.contains { text.contains($0) }, "\(name) keeps the token")
        }
    }

    /// The password is sent (as Basic auth) but appears in no output: plan and apply, text and
    /// JSON, success and failure.
    @Test func urlPasswordIsNeverPrinted() async throws {
        let (folder, server, _) = try await Self.server()
        defer { withExtendedLifetime(folder) {} }
        defer { server.stop() }
        let harness = try CLIHarness()
        let host = "127.0.0.1:\(server.port)"
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 1 }
            downloads:
              - { url: "http://bob:hunter2-secret@\(host)/file.bin", to: file.bin }
              - { url: "http://bob:hunter2-secret@\(host)/missing.bin", to: missing.bin }
            uploads:
              - { from: file.bin, to: "http://bob:hunter2-secret@\(host)/up/file.bin", method: put }
            """)
        var outputs: [String] = []
        for arguments in [["validate"], ["plan"], ["plan", "--json"], ["apply"], ["apply", "--json"], ["plan"]] {
            let r = try await harness.run(arguments)
            outputs.append(r.allOutput)
            #expect(!r.allOutput.contains("hunter2"), "\(arguments): \(r.allOutput)")
        }
        // The URLs are shown, with the user kept and the password masked.
        #expect(outputs[1].contains("http://bob:***@\(host)/up/file.bin"), "\(outputs[1])")
        #expect(outputs[2].contains("\"url\":\"http://bob:***@\(host)/missing.bin\""), "\(outputs[2])")
        #expect(outputs[3].contains("bob:***@\(host)/missing.bin"), "\(outputs[3])")
        // Nor is it kept on disk: cache records (download states, upload records) hold URLs masked.
        let cache = harness.folder + "/.syncr/cache"
        let kept = try FileManager.default.contentsOfDirectory(atPath: cache)
        #expect(kept.contains { $0.hasSuffix(".upload") } && kept.contains("records.journal"), "\(kept)")
        for name in kept {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: cache + "/" + name))
            if name.hasSuffix(".data") { continue }
            #expect(!String(decoding: bytes, as: UTF8.self).contains("hunter2"), "\(name) keeps the password")
        }
        let headers = try await server.stats()["/file.bin"].headers
        #expect(headers.contains { $0["authorization"] == "Basic " + Data("bob:hunter2-secret".utf8).base64EncodedString() })

        // A manifest error quoting the line masks it too.
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - { url: "http://bob:hunter2-secret@\(host)/file.bin", to: file.bin, sha256: nothex }
            """)
        let invalid = try await harness.run(["validate"])
        #expect(invalid.status != 0)
        #expect(invalid.allOutput.contains("bob:***@"))
        #expect(!invalid.allOutput.contains("hunter2"))
    }
}
