import Foundation
@testable import SyncrHTTP
import Testing

/// The proxy variables are read once, when the engine is made (a session makes one for its
/// run), and every request without variables of its own is routed by them: not by the
/// process's environment as it is when the request is made.
@Suite(.timeLimit(.minutes(5)))
struct ProxyEnvironmentOnceTests {
    @Test func requestsFollowTheEnginesVariablesUnlessTheyBringTheirOwn() async throws {
        let root = try TemporaryDirectory(prefix: "proxy-once")
        try Data(repeating: 7, count: 10_000).write(to: root.appending("f.bin"))
        let server = try await FaultServer.start(root: root.url)
        defer { server.stop() }
        let proxy = try await Tinyproxy.start()
        defer { proxy.stop() }
        // Given to the engine as it is made, whatever this process's environment says now.
        let engine = TransferEngine(configuration: .init(proxies: ProxyEnvironment { ["http_proxy": proxy.url][$0] }))
        defer { engine.shutdown() }
        for _ in 0..<3 {
            let outcome = await engine.perform(HTTPRequest(url: server.url("/f.bin"), displayURL: "f"), sink: DiscardSink())
            #expect((try? outcome.get())?.head.status == 200, "\(outcome)")
        }
        var direct = HTTPRequest(url: server.url("/f.bin"), displayURL: "f")
        direct.proxies = ProxyEnvironment { ["http_proxy": proxy.url, "no_proxy": "127.0.0.1"][$0] }
        let outcome = await engine.perform(direct, sink: DiscardSink())
        #expect((try? outcome.get())?.head.status == 200, "\(outcome)")
        let headers = try await server.stats()["/f.bin"].headers
        #expect(headers.count == 4, "\(headers)")
        #expect(headers.prefix(3).allSatisfy { $0["via"]?.contains("tinyproxy") == true }, "the engine's proxy: \(headers)")
        #expect(headers.last?["via"] == nil, "the request's own variables, whose no_proxy lists the server: \(headers)")
    }
}
