import Foundation
import Testing

/// Redirects through the real binary against the fault server, which records the headers of
/// every request it gets: credentials must reach only the origin they were written for.
/// `127.0.0.1` and `localhost` name the same server but are two origins.
@Suite(.timeLimit(.minutes(5)))
struct RedirectTests {
    struct Setup {
        let folder: TemporaryDirectory
        let server: FaultServer
        let harness: CLIHarness
        let content: Data
        /// The same server under its other name: another origin.
        var otherOrigin: String { "http://localhost:\(server.port)" }
    }

    static func setUp(size: Int = 20_000) async throws -> Setup {
        let folder = try TemporaryDirectory(prefix: "redirect")
        let root = try folder.makeDirectory("root")
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try content.write(to: root.appendingPathComponent("file.bin"))
        let server = try await FaultServer.start(root: root)
        return Setup(folder: folder, server: server, harness: try CLIHarness(), content: content)
    }

    static let environment = ["API_TOKEN": "tok-from-env-1234", "API_KEY": "key-from-env-5678"]

    static func manifest(_ url: String, extra: String = "") -> String {
        """
        version: 1
        defaults:
          retries: 0
          headers:
            Authorization: "Bearer ${API_TOKEN}"
            X-Api-Key: "${API_KEY}"
            X-Auth-Token: literal-token-4321
            X-Plain: plain-value
        downloads:
          - url: "\(url)"
            to: file.bin
        \(extra.isEmpty ? "" : "    " + extra)
        """
    }

    @Test func credentialsAreDroppedOnARedirectToAnotherOrigin() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: s.otherOrigin + "/file.bin"))
        try s.harness.write("syncr.yml", Self.manifest(s.server.url("/start")))
        let r = try await s.harness.run(["apply"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/file.bin") == s.content)
        let stats = try await s.server.stats()
        let first = try #require(stats["/start"].headers.first)
        #expect(first["authorization"] == "Bearer tok-from-env-1234")
        #expect(first["x-api-key"] == "key-from-env-5678")
        let final = stats["/file.bin"].headers
        #expect(!final.isEmpty)
        for headers in final {
            #expect(headers["host"] == "localhost:\(s.server.port)")
            #expect(headers["authorization"] == nil, "Authorization must not cross origins")
            #expect(headers["x-api-key"] == nil, "a header from ${ENV} must not cross origins")
            #expect(headers["x-auth-token"] == nil, "a header named as a credential must not cross origins, written out or not")
            #expect(headers["x-plain"] == "plain-value", "other headers follow")
        }
    }

    @Test func credentialsStayOnASameOriginRedirect() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: "/file.bin", redirectStatus: 301))
        try s.harness.write("syncr.yml", Self.manifest(s.server.url("/start")))
        let r = try await s.harness.run(["apply"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let final = try await s.server.stats()["/file.bin"].headers
        #expect(!final.isEmpty)
        #expect(final.allSatisfy { $0["authorization"] == "Bearer tok-from-env-1234" && $0["x-api-key"] == "key-from-env-5678" })
    }

    @Test func trustedRedirectsCarryCredentialsAcross() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: s.otherOrigin + "/file.bin"))
        try s.harness.write("syncr.yml", Self.manifest(s.server.url("/start"), extra: "trusted_redirects: true"))
        let r = try await s.harness.run(["apply"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let final = try await s.server.stats()["/file.bin"].headers
        #expect(!final.isEmpty)
        #expect(final.allSatisfy { $0["authorization"] == "Bearer tok-from-env-1234" })
    }

    /// A segmented download through a cross-origin redirect: every segment follows it, carries
    /// its Range to the target, and no credentials.
    @Test func segmentedDownloadThroughARedirect() async throws {
        let s = try await Self.setUp(size: 3 << 20)
        defer { s.server.stop() }
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: s.otherOrigin + "/file.bin", redirectStatus: 307))
        // The first connection pauses after 256 KiB, so the rest is surely shared out.
        try await s.server.behave(path: "/file.bin", FaultBehaviour(stallAfter: 256 << 10, stallSeconds: 3, stallTimes: 1))
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, headers: { Authorization: "Bearer ${API_TOKEN}" } }
            downloads:
              - { url: "\(s.server.url("/start"))", to: file.bin, connections: 4, min_split: 64KiB }
            """)
        let r = try await s.harness.run(["apply"], environment: Self.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/file.bin") == s.content)
        let stats = try await s.server.stats()
        #expect(stats["/file.bin"].ranges.count >= 2, "ranged requests reached the target: \(stats["/file.bin"].ranges)")
        #expect(stats["/file.bin"].headers.allSatisfy { $0["authorization"] == nil })
    }

    /// A redirect to a server that is down: the failure names where the request went (the
    /// user would otherwise look at the server that answered), and the entry's own server,
    /// which answered, is not taken for down: the next entry on it still goes.
    @Test func aRedirectToAServerThatIsDownNamesItAndTheOriginStaysUsable() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        let dead = try freePort()
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: "http://127.0.0.1:\(dead)/file.bin?token=QS3CRET99"))
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, jobs: 1 }
            downloads:
              - { url: "\(s.server.url("/start"))", to: first.bin }
              - { url: "\(s.server.url("/file.bin"))", to: second.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("\(s.server.url("/start")) (redirected to http://127.0.0.1:\(dead)/file.bin): connection failed"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("QS3CRET99"), "\(r.stderr)")
        #expect(r.stderr.contains("1 downloaded"), "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/second.bin") == s.content)
    }

    /// A redirect to a file the other server does not have: the 404 names that server.
    @Test func aRedirectToAMissingFileNamesWhereItWent() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/start", FaultBehaviour(redirectTo: s.otherOrigin + "/missing.bin?sig=QS3CRET99"))
        try s.harness.write("syncr.yml", Self.manifest(s.server.url("/start")))
        let r = try await s.harness.run(["apply"], environment: Self.environment)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("\(s.server.url("/start")) (redirected to \(s.otherOrigin)/missing.bin): HTTP 404"), "\(r.stderr)")
        #expect(!r.stderr.contains("QS3CRET99"), "\(r.stderr)")
    }

    @Test func redirectLoopIsAnError() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/a", FaultBehaviour(redirectTo: "/b"))
        try await s.server.behave(path: "/b", FaultBehaviour(redirectTo: "/a"))
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 3 }
            downloads:
              - { url: "\(s.server.url("/a"))", to: file.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("redirect loop: \(s.server.url("/a")) was already visited after 2 redirect(s)"), "\(r.stderr)")
        // Not retried: a loop does not go away by asking again.
        #expect(try await s.server.stats()["/a"].gets == 1)
    }

    @Test func maxRedirectsLimitsTheChain() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        for i in 0..<3 { try await s.server.behave(path: "/r\(i)", FaultBehaviour(redirectTo: "/r\(i + 1)")) }
        try await s.server.behave(path: "/r3", FaultBehaviour(redirectTo: "/file.bin"))
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, max_redirects: 2 }
            downloads:
              - { url: "\(s.server.url("/r0"))", to: file.bin }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("more than 2 redirects (the last to \(s.server.url("/r3")))"), "\(r.stderr)")

        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, max_redirects: 4 }
            downloads:
              - { url: "\(s.server.url("/r0"))", to: file.bin }
            """)
        let ok = try await s.harness.run(["apply"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(FileManager.default.contents(atPath: s.harness.folder + "/file.bin") == s.content)
    }

    /// A PUT answered with 307 to another origin is not re-sent there without trust.
    @Test func uploadBodyIsNotSentToAnotherOrigin() async throws {
        let s = try await Self.setUp()
        defer { s.server.stop() }
        try await s.server.behave(path: "/up", FaultBehaviour(redirectTo: s.otherOrigin + "/elsewhere", redirectStatus: 307))
        try Data(repeating: 1, count: 5000).write(to: URL(fileURLWithPath: s.harness.folder + "/local.bin"))
        try s.harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            uploads:
              - { from: local.bin, to: "\(s.server.url("/up"))", method: put }
            """)
        let r = try await s.harness.run(["apply"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("trusted_redirects: true"), "\(r.stderr)")
        #expect(try await s.server.stats()["/elsewhere"].requests == 0)
    }
}
