import Foundation
import Testing

/// A server that wants Basic credentials (the fault server's `require_basic`) refuses what an
/// entry sends: the message says where those came from, or why none went, in the words of
/// the entry's settings, for every kind of request (the probe of plan, the GET of apply, a
/// PUT, a POST), in the text and in `--json`. Never the secret itself.
@Suite(.timeLimit(.minutes(5)))
struct RefusedCredentialsTests {
    /// One way an entry carries (or fails to carry) credentials, and the hint it must get.
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        /// Settings for `defaults:` (flow mapping content).
        let defaults: String
        /// `user:password@` before the host, or "".
        let userInfo: String
        /// The text of `~/.netrc` (nil: no file).
        let netrc: String?
        /// The hint, with `NETRCFILE` standing for the netrc file's path.
        let hint: String
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "netrc machine", defaults: "netrc: true", userInfo: "",
             netrc: "machine 127.0.0.1 login bob password WRONG-netrc-pw\n",
             hint: "(the server refused the credentials from NETRCFILE (machine 127.0.0.1): check them)"),
        Case(name: "netrc without the host", defaults: "netrc: true", userInfo: "",
             netrc: "machine other.example login bob password OTHER-netrc-pw\n",
             hint: "(netrc: true is set but NETRCFILE has no machine for 127.0.0.1 and no default: add one)"),
        Case(name: "netrc missing", defaults: "netrc: true", userInfo: "", netrc: nil,
             hint: "(netrc: true is set but NETRCFILE cannot be read (No such file or directory): "
                + "create it, or set NETRC to the netrc file)"),
        Case(name: "nothing", defaults: "netrc: false", userInfo: "", netrc: nil,
             hint: "(no credentials were sent: add headers:, user:password@ in the URL, or netrc: true)"),
        Case(name: "header", defaults: "headers: { Authorization: \"Bearer ${REFUSED_TOKEN}\" }", userInfo: "", netrc: nil,
             hint: "(the server refused the credentials from the entry's Authorization header: check them)"),
        Case(name: "URL", defaults: "netrc: false", userInfo: "bob:WRONG-url-pw@", netrc: nil,
             hint: "(the server refused the credentials from the user information in its URL: check them)"),
    ]

    @Test(arguments: cases)
    func theHintSaysWhatWasSent(_ c: Case) async throws {
        let folder = try TemporaryDirectory(prefix: "refused")
        let root = try folder.makeDirectory("root")
        try Data(repeating: 7, count: 20_000).write(to: root.appendingPathComponent("file.bin"))
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        for path in ["/file.bin", "/up/file.bin", "/form"] {
            try await server.behave(path: path, FaultBehaviour(requireBasic: "bob:right-pw"))
        }
        let home = try TemporaryDirectory(prefix: "home")
        let netrc = home.appending(".netrc").path
        if let text = c.netrc {
            try text.write(toFile: netrc, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: netrc)
        }
        let harness = try CLIHarness()
        try Data(repeating: 9, count: 5_000).write(to: URL(fileURLWithPath: harness.folder + "/src.bin"))
        let base = "http://\(c.userInfo)127.0.0.1:\(server.port)"
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, \(c.defaults) }
            downloads:
              - { url: "\(base)/file.bin", to: file.bin }
            uploads:
              - { from: src.bin, to: "\(base)/up/file.bin", method: put }
              - { from: src.bin, to: "\(base)/form", method: post }
            """)
        let environment = ["HOME": home.path, "REFUSED_TOKEN": "WRONG-header-token"]
        let refused = "HTTP 401 Unauthorized (server said: authorization required) "
        let hint = c.hint.replacingOccurrences(of: "NETRCFILE", with: netrc)
        let secrets = ["WRONG-netrc-pw", "OTHER-netrc-pw", "WRONG-url-pw", "WRONG-header-token", "right-pw"]

        let plan = try await harness.run(["plan", "--json"], environment: environment)
        // HEAD: an answer without a body.
        #expect(plan.stdout.contains("HTTP 401 Unauthorized " + hint), "plan: \(plan.allOutput)")
        let apply = try await harness.run(["apply"], environment: environment)
        #expect(apply.status != 0)
        for what in ["file.bin", "up/file.bin", "form"] {
            let line = apply.stderr.split(separator: "\n").first { $0.contains("/\(what):") && $0.contains("HTTP 401") }
            #expect(line?.hasSuffix(refused + hint) == true, "apply, \(what): \(apply.stderr)")
        }
        let json = try await harness.run(["apply", "--json"], environment: environment)
        #expect(json.stdout.components(separatedBy: refused + hint).count == 4, "apply --json: \(json.stdout)")
        for r in [plan, apply, json] {
            #expect(!secrets.contains { r.allOutput.contains($0) }, "\(r.allOutput)")
        }
        let statuses = try await server.stats()["/file.bin"].statuses
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 401 }, "\(statuses)")
    }

    /// Two servers of one folder holding `file.bin`: the entry's answers `/moved.bin` with a
    /// redirect to the other's `/file.bin`, which asks for Basic `bob:right-pw`. The caller
    /// stops both.
    static func redirectToAnotherOrigin() async throws -> (TemporaryDirectory, entry: FaultServer, other: FaultServer) {
        let folder = try TemporaryDirectory(prefix: "refused")
        let root = try folder.makeDirectory("root")
        try Data(repeating: 7, count: 20_000).write(to: root.appendingPathComponent("file.bin"))
        let entry = try await FaultServer.start(root: root)
        let other: FaultServer
        do { other = try await FaultServer.start(root: root) } catch { entry.stop(); throw error }
        do {
            try await other.behave(path: "/file.bin", FaultBehaviour(requireBasic: "bob:right-pw"))
            try await entry.behave(path: "/moved.bin", FaultBehaviour(redirectTo: other.url("/file.bin")))
        } catch {
            entry.stop()
            other.stop()
            throw error
        }
        return (folder, entry, other)
    }

    /// A redirect to another origin drops the entry's credentials (unless `trusted_redirects:
    /// true`): the server there refused a request without them, and the hint says so rather
    /// than that the header was refused.
    @Test func aRedirectToAnotherOriginSaysTheCredentialsStayedBehind() async throws {
        let (folder, entry, other) = try await Self.redirectToAnotherOrigin()
        defer { entry.stop(); other.stop(); withExtendedLifetime(folder) {} }  // its files are served
        let harness = try CLIHarness()
        for (trusted, hint) in [
            ("false", "(redirects took the request to another origin, where the entry's credentials are not sent: "
                + "set trusted_redirects: true on the entry if that server is to have them)"),
            ("true", "(the server refused the credentials from the entry's Authorization header: check them)"),
        ] {
            try harness.write("syncr.yml", """
                version: 1
                defaults: { retries: 0, trusted_redirects: \(trusted), headers: { Authorization: "Bearer ${REFUSED_TOKEN}" } }
                downloads:
                  - { url: "\(entry.url("/moved.bin"))", to: file.bin }
                """)
            let r = try await harness.run(["apply"], environment: ["REFUSED_TOKEN": "WRONG-header-token"])
            #expect(r.stderr.contains("(redirected to \(other.url("/file.bin"))): HTTP 401 Unauthorized "
                + "(server said: authorization required) " + hint), "trusted_redirects: \(trusted): \(r.stderr)")
        }
    }

    /// `netrc: true` whose file has a machine for the entry's host is left behind by a
    /// redirect to another origin as a header is; one with no machine for it (and no default)
    /// would have sent nothing to the entry's own server either, so nothing was withheld: the
    /// hint says what the file lacks.
    @Test(arguments: [true, false])
    func netrcIsWithheldByARedirectOnlyWhenItHadSomethingToSend(_ machineForTheHost: Bool) async throws {
        let (folder, entry, other) = try await Self.redirectToAnotherOrigin()
        defer { entry.stop(); other.stop() }
        let netrc = folder.appending("netrc").path
        let machine = machineForTheHost ? "127.0.0.1" : "other.example"
        try "machine \(machine) login bob password netrc-secret-pw\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, netrc: true }
            downloads:
              - { url: "\(entry.url("/moved.bin"))", to: file.bin }
            """)
        let r = try await harness.run(["apply"], environment: ["NETRC": netrc])
        let hint = machineForTheHost
            ? "(redirects took the request to another origin, where the entry's credentials are not sent: "
                + "set trusted_redirects: true on the entry if that server is to have them)"
            : "(netrc: true is set but \(netrc) has no machine for 127.0.0.1 and no default: add one)"
        #expect(r.stderr.contains("(redirected to \(other.url("/file.bin"))): HTTP 401 Unauthorized "
            + "(server said: authorization required) " + hint), "\(r.stderr)")
        #expect(!r.allOutput.contains("netrc-secret-pw"), "\(r.allOutput)")
    }
}
