import Foundation
import Testing

/// A server on IPv6 loopback that `no_proxy` lists, in each form it may be written: syncr
/// connects to it directly, never through the proxy from the environment (a `RefusingProxy`,
/// which would answer 403). curl 7.88 on its own matched only `::1` here: a range or the
/// bracketed form sent the request to the proxy.
@Suite(.timeLimit(.minutes(5)), .enabled(if: ipv6LoopbackAvailable(), "IPv6 loopback (::1) is not available on this host"))
struct NoProxyIPv6Tests {
    @Test(arguments: ["::1", "[::1]", "::1/128", "::/64", "localhost, fd00::/8, ::1"])
    func aListedIPv6ServerIsAskedDirectly(_ noProxy: String) async throws {
        let folder = try TemporaryDirectory(prefix: "noproxy6")
        let root = try folder.makeDirectory("root")
        let content = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try content.write(to: root.appendingPathComponent("file.bin"))
        let server = try await FaultServer.start(root: root, host: "::1")
        defer { server.stop() }
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/file.bin"))", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: [
            "http_proxy": proxy.url, "all_proxy": proxy.url, "ALL_PROXY": "", "no_proxy": noProxy, "NO_PROXY": "",
        ])
        #expect(r.status == 0, "\(r.allOutput)")
        #expect(FileManager.default.contents(atPath: harness.folder + "/file.bin") == content)
        #expect(proxy.requests().isEmpty, "the proxy was asked: \(proxy.requests())")
    }

    /// The other side: a server on ::1 that no_proxy does not list goes through the proxy.
    @Test func anUnlistedIPv6ServerGoesThroughTheProxy() async throws {
        let harness = try CLIHarness()
        let proxy = try await RefusingProxy.start(status: 403)
        defer { proxy.stop() }
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "http://[::1]:9/file.bin", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: ["http_proxy": proxy.url, "no_proxy": "::2, fd00::/8", "NO_PROXY": ""])
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(proxy.requests() == ["GET http://[::1]:9/file.bin HTTP/1.1"], "\(proxy.requests())")
    }
}
