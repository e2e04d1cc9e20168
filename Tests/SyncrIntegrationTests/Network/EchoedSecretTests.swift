import Foundation
import Testing

/// A server that refuses a request and quotes its headers back in the error page, lowercased
/// or uppercased (`authorization: bearer mytoken`): the secrets in it (a header from `${VAR}`,
/// the Basic pair of a URL's password or of a netrc password) are masked in every output
/// all the same: the text on stderr, `--json`, `--report` and `--junit`.
@Suite(.timeLimit(.minutes(5)))
struct EchoedSecretTests {
    @Test func aSecretEchoedInAnotherCaseIsMasked() async throws {
        let folder = try TemporaryDirectory(prefix: "echo")
        let root = try folder.makeDirectory("root")
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        for (path, echo) in [("/lower.bin", "lower"), ("/upper.bin", "upper"), ("/url.bin", "lower"), ("/netrc.bin", "upper")] {
            try await server.behave(path: path, FaultBehaviour(status: 401, echoHeaders: .init(rawValue: echo)))
        }
        let home = try TemporaryDirectory(prefix: "home")
        let netrc = home.appending(".netrc").path
        try "machine 127.0.0.1 login carol password NetrcPw-Echo-99\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: netrc)
        let harness = try CLIHarness()
        let base = "127.0.0.1:\(server.port)"
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "http://\(base)/lower.bin", to: lower.bin, headers: { Authorization: "Bearer ${ECHO_TOKEN}" } }
              - { url: "http://\(base)/upper.bin", to: upper.bin, headers: { Authorization: "Bearer ${ECHO_TOKEN}" } }
              - { url: "http://bob:UrlPass-Echo-88@\(base)/url.bin", to: url.bin }
              - { url: "http://\(base)/netrc.bin", to: netrc.bin, netrc: true }
            """)
        let environment = ["HOME": home.path, "ECHO_TOKEN": "MyToken-Echo-77"]
        let text = try await harness.run(["apply"], environment: environment)
        let json = try await harness.run(["apply", "--json", "--report", "r.json", "--junit", "j.xml"], environment: environment)
        let report = try String(contentsOfFile: harness.folder + "/r.json", encoding: .utf8)
        let junit = try String(contentsOfFile: harness.folder + "/j.xml", encoding: .utf8)

        // The echo did reach the output, with the secrets masked in it.
        #expect(text.stderr.contains("authorization: bearer ***"), "\(text.stderr)")
        #expect(text.stderr.contains("AUTHORIZATION: BEARER ***"), "\(text.stderr)")
        #expect(text.stderr.contains("authorization: basic ***"), "\(text.stderr)")
        #expect(text.stderr.contains("AUTHORIZATION: BASIC ***"), "\(text.stderr)")
        let secrets = ["MyToken-Echo-77", "UrlPass-Echo-88", "NetrcPw-Echo-99",
                       Data("bob:UrlPass-Echo-88".utf8).base64EncodedString(),
                       Data("carol:NetrcPw-Echo-99".utf8).base64EncodedString()]
        for (name, output) in [("stderr", text.allOutput), ("--json", json.allOutput), ("--report", report), ("--junit", junit)] {
            let folded = output.lowercased()
            for secret in secrets {
                #expect(!folded.contains(secret.lowercased()), "\(name) shows \(secret) in some case: \(output)")
            }
        }
    }
}
