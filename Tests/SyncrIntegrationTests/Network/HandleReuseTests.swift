import Foundation
@testable import SyncrHTTP
import Testing

/// The engine reuses the curl handles of finished transfers (`EasyHandlePool`). Nothing of one
/// request may reach the next one that gets its handle: not a header, a credential, a range,
/// nor a relaxed certificate check. Each test runs its requests one after another on an engine
/// of its own, each once the handle of the one before is back in the pool (the engine thread
/// lets go of a finished transfer just after it hands over the answer), so every request after
/// the first gets the handle the one before used.
@Suite(.timeLimit(.minutes(5)))
struct HandleReuseTests {
    /// Requests with credentials (headers and the URL's user information), a range and
    /// If-Range, each followed by a plain GET: the fault server records every request's
    /// headers, and the plain ones carry none of them.
    @Test func aPlainRequestAfterOneWithCredentialsAndARangeSendsNeither() async throws {
        let root = try TemporaryDirectory(prefix: "reuse")
        let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try content.write(to: root.appending("secret.bin"))
        try content.write(to: root.appending("plain.bin"))
        let server = try await FaultServer.start(root: root.url)
        defer { server.stop() }
        let engine = TransferEngine()
        defer { engine.shutdown() }
        let withUser = server.url("/secret.bin").replacingOccurrences(of: "http://", with: "http://user:pw@")
        for _ in 0..<5 {
            var secret = HTTPRequest(url: withUser, displayURL: "secret",
                                     headers: [("Authorization", "Bearer tok-1234"), ("X-Api-Key", "key-5678")],
                                     range: ByteRange(start: 0, end: 99), ifRange: "\"v1\"")
            secret.ownConnection = true
            _ = try answer(await engine.perform(secret, sink: DiscardSink()))
            await handBack(engine)
            let sink = BodyPrefixSink(limit: 100_000)
            let plain = try answer(await engine.perform(HTTPRequest(url: server.url("/plain.bin"), displayURL: "plain"),
                                                        sink: sink))
            #expect(plain.head.status == 200)
            #expect(sink.bytes == Array(content), "the whole file, not the range asked for before")
            await handBack(engine)
        }
        #expect(engine.handles.reuses.load(ordering: .relaxed) == 9, "every request but the first reused a handle")
        let stats = try await server.stats()
        #expect(stats["/secret.bin"].headers.count == 5)
        #expect(stats["/secret.bin"].headers.allSatisfy { $0["authorization"] == "Bearer tok-1234" && $0["range"] != nil })
        let plain = stats["/plain.bin"].headers
        #expect(plain.count == 5)
        for headers in plain {
            #expect(headers["authorization"] == nil, "\(headers)")
            #expect(headers["x-api-key"] == nil, "\(headers)")
            #expect(headers["range"] == nil && headers["if-range"] == nil, "\(headers)")
        }
    }

    /// A request that skipped the certificate check (`insecure: true`) gives its handle back;
    /// the next request to the same server, with the default check, still refuses the
    /// certificate nothing trusts (a TLS session kept by the handle must not stand in for it).
    @Test func aCheckedRequestAfterAnInsecureOneStillRefusesTheCertificate() async throws {
        let s = try await TLSTests.setUp()
        defer { s.nginx.stop() }
        let engine = TransferEngine()
        defer { engine.shutdown() }
        for _ in 0..<3 {
            var insecure = HTTPRequest(url: s.nginx.url("/a.bin"), displayURL: "a")
            insecure.tls = TLSOptions(verify: false)
            let answered = try answer(await engine.perform(insecure, sink: DiscardSink()))
            #expect(answered.head.status == 200)
            await handBack(engine)
            let checked = await engine.perform(HTTPRequest(url: s.nginx.url("/b.bin"), displayURL: "b"), sink: DiscardSink())
            if case .failure(.tls) = checked {} else { Issue.record("expected a certificate failure, got \(checked)") }
            await handBack(engine)
        }
        #expect(engine.handles.reuses.load(ordering: .relaxed) == 5, "every request but the first reused a handle")
    }

    /// Returns once the last request's handle is back in the pool.
    func handBack(_ engine: TransferEngine) async {
        let back = await poll(timeout: .seconds(30)) { engine.handles.idleCount == 1 }
        #expect(back, "the finished transfer's handle should be back in the pool")
    }

    /// The answer of an outcome, or a recorded issue.
    func answer(_ outcome: Result<HTTPResponse, TransferError>,
                sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPResponse {
        switch outcome {
        case .success(let response): return response
        case .failure(let error):
            Issue.record("expected an answer, got \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }
}
