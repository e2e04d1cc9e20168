import Foundation
import Testing

/// Which connection failed is known from the route syncr chose, not read from curl's words:
/// through a proxy every connection curl opens is to the proxy, and without one (no_proxy
/// lists the host) it is the server's, whatever address curl's message names.
@Suite(.timeLimit(.minutes(5)))
struct ProxyConnectionHintTests {
    /// A listening socket that never accepts: the kernel completes connections into its
    /// queue, so curl's connection is made and nothing ever answers on it.
    static func silentListener() throws -> (socket: Int32, port: Int) {
        try listeningSocket(backlog: 16)
    }

    static func manifest(_ url: String) -> String {
        """
        version: 1
        defaults: { retries: 0, timeout: 2s }
        downloads:
          - { url: "\(url)", to: file.bin }
        """
    }

    /// A SOCKS proxy took the connection and never answered its handshake: the timeout names
    /// it as the one waited on, and the password in its URL is not printed. (An HTTP proxy
    /// that never answers was sent a request, the CONNECT or the request itself: that is a
    /// stall, worded in the manifest's `timeout`.)
    @Test(arguments: ["http", "https"])
    func aSocksProxyThatTakesTheConnectionAndNeverAnswersIsNamed(_ scheme: String) async throws {
        let (listener, port) = try Self.silentListener()
        defer { close(listener) }
        let harness = try CLIHarness()
        let server = try freePort()
        try harness.write("syncr.yml", Self.manifest("\(scheme)://127.0.0.2:\(server)/file.bin"))
        let r = try await harness.run(["apply"], environment: ["all_proxy": "socks5://user:proxy-secret@127.0.0.1:\(port)",
                                                              "no_proxy": "", "NO_PROXY": ""])
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains("timed out"), "\(r.allOutput)")
        #expect(r.allOutput.contains("127.0.0.1:\(port) is the proxy set in all_proxy, which took the connection and gave "
            + "no answer in time: check that it can reach 127.0.0.2:\(server)"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("proxy-secret"), "\(r.allOutput)")
    }

    /// no_proxy lists the server, whose port refuses: the failure is the server's, and no
    /// proxy is named, though one is set (and is the address the server's port refuses on).
    @Test func aServerReachedDirectlyIsNotTakenForTheProxy() async throws {
        let dead = try freePort()
        let harness = try CLIHarness()
        try harness.write("syncr.yml", Self.manifest("http://127.0.0.1:\(dead)/file.bin"))
        let r = try await harness.run(["apply"], environment: ["http_proxy": "http://127.0.0.1:\(dead)",
                                                              "no_proxy": "127.0.0.1", "NO_PROXY": ""])
        #expect(r.status == 1, "\(r.allOutput)")
        #expect(r.allOutput.contains("connection failed"), "\(r.allOutput)")
        #expect(!r.allOutput.contains("the proxy set in"), "\(r.allOutput)")
    }
}
