import Foundation
import Testing

/// How many connections a run opens, counted where the internet would see them: the pieces of
/// one file over connections of their own whatever the protocol (HTTP/2 multiplexes requests
/// onto one), the per-host cap over all of them, small files sharing.
///
/// Large files go through `ThrottleProxy`, which caps each connection as CDNs do (and adds
/// latency). Only connections are counted, never seconds.
@Suite("connections", .timeLimit(.minutes(5)))
struct ConnectionTests {
    enum Transport: String, CustomTestStringConvertible, CaseIterable {
        /// https; nginx offers HTTP/2 and HTTP/1.1, as most https servers do.
        case http2
        /// Plain http: HTTP/1.1 only.
        case http1

        var testDescription: String { rawValue }
    }

    struct Setup {
        let nginx: Nginx
        let project: Project
        let root: TemporaryDirectory
        /// Kept for the server's certificate files.
        let certificates: TestCertificates?
    }

    /// nginx serving a fresh folder over `transport`; with TLS, the CA is `ca.pem` beside the
    /// manifest (use `network` in the defaults).
    static func setUp(_ transport: Transport) async throws -> Setup {
        let root = try TemporaryDirectory(prefix: "www")
        let project = try Project()
        var options = Nginx.Options()
        var certificates: TestCertificates?
        if transport == .http2 {
            let made = try await TestCertificates.make()
            options.tls = made.server
            options.http2 = true
            try FileManager.default.copyItem(at: made.caCertificate, to: project.file("ca.pem"))
            certificates = made
        }
        let nginx = try await Nginx.start(root: root.url, options: options)
        return Setup(nginx: nginx, project: project, root: root, certificates: certificates)
    }

    /// `ca_cert` for the https setups, so a defaults mapping can start with it.
    static func trust(_ transport: Transport) -> String {
        transport == .http2 ? "ca_cert: ca.pem, " : ""
    }

    @Test(arguments: Transport.allCases)
    func thePiecesOfOneFileGoOverConnectionsOfTheirOwn(_ transport: Transport) async throws {
        let s = try await Self.setUp(transport)
        defer { s.nginx.stop() }
        try makeFile(path: s.root.appending("big.bin"), size: 16 << 20, seed: 71)
        let proxy = try await ThrottleProxy.start(targetPort: s.nginx.port, rate: 2_000_000, latencyMilliseconds: 10)
        defer { proxy.stop() }
        try s.project.writeManifest(
            defaults: "{ \(Self.trust(transport))connections: 4, min_split: 4MiB, retries: 2 }",
            downloads: ["{ url: \(proxy.url(s.nginx.url("/big.bin"))), to: big.bin }"])
        let result = try await s.project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: s.project.file("big.bin")) == (try await sha256(file: s.root.appending("big.bin"))))
        let stats = try proxy.stats()
        #expect(stats.maxOpen >= 4, "the 4 pieces in flight had a connection each: \(stats)")
        let gets = try s.nginx.accessLog().to("/big.bin").filter { $0.method == "GET" }
        #expect(Set(gets.map(\.connection)).count >= 4, "\(gets)")
        if transport == .http2 {
            #expect(gets.contains { $0.serverProtocol == "HTTP/2.0" }, "the server offered HTTP/2: \(gets)")
        }
    }

    /// `max_connections_per_host` caps the pieces too, over HTTP/2 and HTTP/1.1 together: 8
    /// connections asked for, 2 allowed, or 1 (the first request's HTTP/2 connection then has to
    /// make way for the pieces').
    @Test(arguments: [1, 2])
    func thePerHostCapHoldsForThePiecesOverHTTP2(cap: Int) async throws {
        let s = try await Self.setUp(.http2)
        defer { s.nginx.stop() }
        try makeFile(path: s.root.appending("big.bin"), size: 16 << 20, seed: 72)
        let proxy = try await ThrottleProxy.start(targetPort: s.nginx.port, rate: 4_000_000)
        defer { proxy.stop() }
        try s.project.writeManifest(
            defaults: "{ ca_cert: ca.pem, connections: 8, max_connections_per_host: \(cap), min_split: 4MiB, retries: 2 }",
            downloads: ["{ url: \(proxy.url(s.nginx.url("/big.bin"))), to: big.bin }"])
        let result = try await s.project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: s.project.file("big.bin")) == (try await sha256(file: s.root.appending("big.bin"))))
        let stats = try proxy.stats()
        #expect(stats.maxOpen <= cap, "\(stats)")
        let gets = try s.nginx.accessLog().to("/big.bin").filter { $0.method == "GET" }
        #expect(gets.count >= 2, "the file still came in pieces: \(gets)")
    }

    /// Many small files from one https host share multiplexed HTTP/2 connections: only the
    /// pieces of a large file need connections of their own.
    @Test func smallFilesOverHTTP2ShareConnections() async throws {
        let s = try await Self.setUp(.http2)
        defer { s.nginx.stop() }
        let count = 16
        var downloads: [String] = []
        for i in 0..<count {
            try makeFile(path: s.root.appending("f\(i).bin"), size: 100_000, seed: UInt64(80 + i))
            downloads.append("{ url: \(s.nginx.url("/f\(i).bin")), to: f\(i).bin }")
        }
        try s.project.writeManifest(defaults: "{ ca_cert: ca.pem, jobs: 8, connections: 8, retries: 2 }",
                                    downloads: downloads)
        let result = try await s.project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for i in 0..<count {
            #expect(FileManager.default.contents(atPath: s.project.file("f\(i).bin").path)
                    == FileManager.default.contents(atPath: s.root.appending("f\(i).bin").path))
        }
        let gets = try s.nginx.accessLog().filter { $0.method == "GET" }
        #expect(gets.count == count)
        #expect(gets.allSatisfy { $0.serverProtocol == "HTTP/2.0" }, "\(gets)")
        #expect(Set(gets.map(\.connection)).count < count, "\(gets)")
    }
}
