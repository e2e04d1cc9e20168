import Foundation
import Testing

/// Certificate checks against a real nginx serving https with a private CA made for the test.
@Suite(.timeLimit(.minutes(5)))
struct TLSTests {
    struct Setup {
        let harness: CLIHarness
        let nginx: Nginx
        let certificates: TestCertificates
        let content: Data
    }

    /// nginx on https with `files` (default: the certificate for 127.0.0.1), serving `a.bin`
    /// and `b.bin`; the CA certificate copied beside the manifest as `ca.pem`.
    static func setUp(wrongName: Bool = false, extra: String = "") async throws -> Setup {
        let certificates = try await TestCertificates.make()
        let root = try certificates.directory.makeDirectory("root")
        let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try content.write(to: root.appendingPathComponent("a.bin"))
        try content.write(to: root.appendingPathComponent("b.bin"))
        let nginx = try await Nginx.start(root: root, options: .init(
            extraServerDirectives: extra, tls: wrongName ? certificates.wrongName : certificates.server))
        let harness = try CLIHarness()
        try FileManager.default.copyItem(atPath: certificates.caCertificate.path, toPath: harness.folder + "/ca.pem")
        return Setup(harness: harness, nginx: nginx, certificates: certificates, content: content)
    }

    @Test func untrustedCertificateFailsNamingHostAndReason() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot verify the certificate of 127.0.0.1:\(s.nginx.port)"), "\(r.stderr)")
        #expect(r.stderr.contains("unable to get local issuer certificate"), "curl's reason is given: \(r.stderr)")
        #expect(r.stderr.contains("ca_cert"), "the message says what to do")
        #expect(!FileManager.default.fileExists(atPath: s.harness.folder + "/a.bin"))
    }

    @Test func caCertTrustsThePrivateCA() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, ca_cert: ca.pem }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin, connections: 4, min_split: 64KiB }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/a.bin") == s.content)
    }

    /// The CA is added to the system's, not put in their place: `ca_cert` on one entry leaves
    /// the other entries' trust as it was (here: still refusing the private CA).
    @Test func caCertAppliesToItsEntryOnly() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin, ca_cert: ca.pem }
              - { url: "\(s.nginx.url("/b.bin"))", to: b.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/a.bin") == s.content)
        #expect(!FileManager.default.fileExists(atPath: s.harness.folder + "/b.bin"))
    }

    @Test func sslCertFileTrustsThePrivateCA() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin }
            """)
        let r = try await s.harness.run(["apply"], environment: ["SSL_CERT_FILE": s.harness.folder + "/ca.pem"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/a.bin") == s.content)
    }

    /// A `SSL_CERT_FILE` that names no readable file is ignored, as OpenSSL ignores it, and
    /// the failure says so rather than advising to set it.
    @Test func anUnreadableSslCertFileIsNamedInTheAdvice() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin }
            """)
        let missing = s.harness.folder + "/no-such-ca.pem"
        let r = try await s.harness.run(["apply"], environment: ["SSL_CERT_FILE": missing])
        #expect(r.status == 1)
        #expect(r.stderr.contains("SSL_CERT_FILE names \(missing), which cannot be read (No such file or directory), so it was ignored"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("(or SSL_CERT_FILE)"))
    }

    @Test func insecureSkipsTheChecksForThatEntryAndThePlanSaysSo() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin, insecure: true }
              - { url: "\(s.nginx.url("/b.bin"))", to: b.bin }
            """)
        let plan = try await s.harness.run(["plan"])
        let lines = plan.stdout.split(separator: "\n")
        let a = try #require(lines.first { $0.contains("a.bin") })
        let b = try #require(lines.first { $0.contains("b.bin") })
        #expect(a.hasPrefix("download"))
        #expect(a.contains("certificate checks are off for this entry (insecure: true)"))
        #expect(b.hasPrefix("error"))
        #expect(!b.contains("insecure: true)"))
        #expect(b.contains("cannot verify the certificate"))
        #expect(b.contains("(for the entry's own server only: a server a redirect leads to is always checked)"), "\(b)")

        let json = try await s.harness.run(["plan", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items[0]["insecure"] as? Bool == true)
        #expect(items[1]["insecure"] == nil)

        let apply = try await s.harness.run(["apply"])
        #expect(apply.status == 1)
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/a.bin") == s.content)
        #expect(!FileManager.default.fileExists(atPath: s.harness.folder + "/b.bin"))
    }

    @Test func wrongHostNameFailsEvenWithTheCATrusted() async throws {
        let s = try await Self.setUp(wrongName: true)
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, ca_cert: ca.pem }
            downloads:
              - { url: "\(s.nginx.url("/a.bin"))", to: a.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot verify the certificate of 127.0.0.1:\(s.nginx.port)"), "\(r.stderr)")
        #expect(r.stderr.contains("127.0.0.1"), "\(r.stderr)")
        #expect(r.stderr.contains("subject name"), "curl says the name does not match: \(r.stderr)")
        #expect(r.stderr.contains("the certificate is for another name than the URL's host: use a name it covers in the URL"),
                "no advice to trust a CA that is trusted already: \(r.stderr)")
    }

    /// https to http is refused unless the entry allows it; the plain-http target is a fault
    /// server whose counters show whether it was asked at all.
    @Test func httpsToHttpRedirectNeedsAllowInsecureRedirects() async throws {
        let plainFolder = try TemporaryDirectory(prefix: "plain")
        let plain = try await FaultServer.start(root: try plainFolder.makeDirectory("root"))
        defer { plain.stop() }
        try Data(repeating: 7, count: 1000).write(to: plain.root.appendingPathComponent("c.bin"))
        let s = try await Self.setUp(extra: "location = /down { return 302 \(plain.url("/c.bin")); }")
        defer { s.nginx.stop() }
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, ca_cert: ca.pem }
            downloads:
              - { url: "\(s.nginx.url("/down"))", to: c.bin }
            """)
        let refused = try await s.harness.run(["apply"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("from https to \(plain.url("/c.bin"))"), "\(refused.stderr)")
        #expect(refused.stderr.contains("allow_insecure_redirects: true"))
        #expect(try await plain.stats()["/c.bin"].requests == 0)

        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, ca_cert: ca.pem }
            downloads:
              - { url: "\(s.nginx.url("/down"))", to: c.bin, allow_insecure_redirects: true }
            """)
        let allowed = try await s.harness.run(["apply"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/c.bin") == Data(repeating: 7, count: 1000))
    }
}
