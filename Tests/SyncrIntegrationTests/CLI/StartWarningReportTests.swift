#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The warnings said before a run (`PlanWarning`: an unreadable netrc file, too little space)
/// reach every machine-read output with their codes, not only stderr: `apply --json`,
/// `--report`, `--junit` and `plan --json`, so that a CI script sees why its requests went
/// without credentials.
@Suite(.timeLimit(.minutes(5)))
struct StartWarningReportTests {
    /// A manifest of one download with `netrc: true`, from a fault server serving its file.
    static func netrcProject() async throws -> (FaultServer, TemporaryDirectory, CLIHarness) {
        let www = try TemporaryDirectory(prefix: "www-start-warning")
        _ = try makeFile(path: www.appending("a.bin"), size: 3000, seed: 5)
        let server = try await FaultServer.start(root: www.url)
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, netrc: true }
            downloads:
              - { url: "\(server.url("/a.bin"))", to: out/a.bin }
            """)
        return (server, www, harness)
    }

    @Test func anUnreadableNetrcFileIsInEveryReport() async throws {
        let (server, www, harness) = try await Self.netrcProject()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let missing = harness.folder + "/no-such-netrc"
        let environment = ["HOME": harness.folder, "NETRC": missing]
        let message = "netrc: true, but \(missing) cannot be read (No such file or directory), so those requests go without "
            + "its credentials; create it, or set NETRC to the netrc file"

        let apply = try await harness.run(["apply", "--json", "--report", "report.json", "--junit", "junit.xml",
                                           "--progress", "none"], environment: environment)
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("syncr: warning: " + message), "\(apply.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(apply.stdout.utf8)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [[String: String]], "\(apply.stdout)")
        #expect(warnings == [["code": "netrc_unreadable", "path": missing, "message": message]], "\(warnings)")
        let report = try String(contentsOfFile: harness.folder + "/report.json", encoding: .utf8)
        #expect(report == apply.stdout, "--report writes what --json prints")
        let junit = try String(contentsOfFile: harness.folder + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("<system-err>warning: netrc: true, but \(missing) cannot be read"), "\(junit)")
        #expect(junit.contains("failures=\"0\" errors=\"0\""), "a warning fails no test case")

        // plan --json keeps its strings (version 1) and gives the same objects beside them.
        let plan = try await harness.run(["plan", "--json"], environment: environment)
        #expect(plan.status == 0, "\(plan.stderr)")
        let planObject = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect(planObject["warnings"] as? [String] == [message], "\(plan.stdout)")
        #expect(planObject["warning_details"] as? [[String: String]] == warnings, "\(plan.stdout)")
    }

    /// `lock --hash` downloads as apply does, and says the same warnings first (it said none:
    /// a 401 from the missing netrc file came with no reason).
    @Test func lockHashSaysTheStartWarnings() async throws {
        let (server, www, harness) = try await Self.netrcProject()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let missing = harness.folder + "/no-such-netrc"
        let lock = try await harness.run(["lock", "--hash"], environment: ["HOME": harness.folder, "NETRC": missing])
        #expect(lock.status == 0, "\(lock.stderr)")
        #expect(lock.stderr.contains("syncr: warning: lock --hash: netrc: true, but \(missing) cannot be read"),
                "\(lock.stderr)")
        #expect(lock.stderr.components(separatedBy: "cannot be read").count == 2, "said once: \(lock.stderr)")
    }

    /// With a readable netrc file there is nothing to say, in either JSON.
    @Test func aReadableNetrcFileGivesNoWarning() async throws {
        let (server, www, harness) = try await Self.netrcProject()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let netrc = try harness.write("netrc", "machine example.invalid login x password y\n")
        #expect(chmod(netrc, 0o600) == 0)
        let environment = ["HOME": harness.folder, "NETRC": netrc]
        let plan = try await harness.run(["plan", "--json"], environment: environment)
        let planObject = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect((planObject["warnings"] as? [Any])?.isEmpty == true, "\(plan.stdout)")
        #expect((planObject["warning_details"] as? [Any])?.isEmpty == true, "\(plan.stdout)")
        let apply = try await harness.run(["apply", "--json", "--progress", "none"], environment: environment)
        #expect(apply.status == 0, "\(apply.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(apply.stdout.utf8)) as? [String: Any])
        #expect((object["warnings"] as? [Any])?.isEmpty == true, "\(apply.stdout)")
    }
}
