import Foundation
import Testing

/// A netrc file curl cannot parse fails every request that reads it, before any connection,
/// with curl's ".netrc parser error" (a read error), which names no file: syncr names the
/// file and the line, says what to change, and does not retry what the file will say again.
@Suite(.timeLimit(.minutes(5)))
struct NetrcSyntaxTests {
    @Test func anUnclosedQuoteIsNamedByFileAndLine() async throws {
        let folder = try TemporaryDirectory(prefix: "netrc-syntax")
        let root = try folder.makeDirectory("root")
        try Data(repeating: 7, count: 20_000).write(to: root.appendingPathComponent("file.bin"))
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        let netrc = folder.appending("netrc").path
        try "# build machine\nmachine 127.0.0.1\n  login bob\n  password \"quoted-secret-pw\n"
            .write(toFile: netrc, atomically: true, encoding: .utf8)
        let harness = try CLIHarness()
        try Data(repeating: 9, count: 5_000).write(to: URL(fileURLWithPath: harness.folder + "/src.bin"))
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 2, netrc: true }
            downloads:
              - { url: "\(server.url("/file.bin"))", to: file.bin }
            uploads:
              - { from: src.bin, to: "\(server.url("/up/file.bin"))", method: put }
            """)
        let said = "\(netrc):4: unclosed quote in netrc: a value there starts with a quote that its line does not close, "
            + "and curl then reads none of the file (netrc: true is set): end the value with a quote on the same line"
        for command in ["plan", "apply"] {
            let r = try await harness.run([command], environment: ["NETRC": netrc])
            #expect(r.status == 1, "\(command): \(r.allOutput)")
            #expect(r.allOutput.contains(said), "\(command): \(r.allOutput)")
            #expect(!r.allOutput.contains("gave up after") && !r.allOutput.contains(".netrc parser error"), "\(r.allOutput)")
            #expect(!r.allOutput.contains("quoted-secret-pw"), "\(r.allOutput)")
        }
        let stats = try await server.stats()
        #expect(stats["/file.bin"].statuses.isEmpty && stats["/up/file.bin"].statuses.isEmpty, "no request was sent")
    }
}
