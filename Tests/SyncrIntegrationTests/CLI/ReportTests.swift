#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `apply --report FILE` and `--junit FILE`: files for CI, written whatever the outcome.
@Suite("apply reports", .timeLimit(.minutes(5)))
struct ReportTests {
    static let secret = "rep-Kq4Zt8Wm3Xv"

    /// What python3's xml.etree (a real XML parser) reads from a JUnit file: per test case its
    /// classname, name, failure message and type (nil when it passed), plus the suite's counts.
    struct JUnit: Decodable {
        struct Case: Decodable {
            var classname: String
            var name: String
            var failure: String?
            var type: String?
        }
        var tests: String
        var failures: String
        var cases: [Case]
    }

    static func parseJUnit(_ path: String) async throws -> JUnit {
        let script = """
            import json, sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            suite = root.find("testsuite")
            cases = [{"classname": c.get("classname"), "name": c.get("name"),
                      "failure": (c.find("failure").get("message") if c.find("failure") is not None else None),
                      "type": (c.find("failure").get("type") if c.find("failure") is not None else None)}
                     for c in suite.iter("testcase")]
            print(json.dumps({"tests": root.get("tests"), "failures": root.get("failures"), "cases": cases}))
            """
        let result = try await runProcess(executable: "python3", arguments: ["-c", script, path])
        try #require(result.exitCode == 0, "the JUnit file does not parse: \(result.stderr)")
        return try JSONDecoder().decode(JUnit.self, from: result.stdoutData)
    }

    /// Downloads that succeed and fail (404, and an unreachable server), an upload, and an
    /// expanded secret: the report equals the --json output and says what kind of error each
    /// failure was (`error_code`, `http_status`), the JUnit file has one test case per entry with
    /// a failure for each failed one, typed by the same code, and neither carries the secret.
    @Test func reportAndJUnitFiles() async throws {
        let www = try TemporaryDirectory(prefix: "www-report")
        _ = try makeFile(path: www.appending("a.bin"), size: 5000, seed: 3)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let harness = try CLIHarness()
        let closed = try CLIHarness.closedPort()
        try harness.write("payload.txt", "to send & <keep>\n")
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: \(server.url("/a.bin"))?token=${REPORT_SECRET}
                to: out/a.bin
              - url: \(server.url("/gone.bin"))
                to: out/gone.bin
              - url: http://127.0.0.1:\(closed)/x.bin
                to: "out/<odd> & \\"name\\".bin"
            uploads:
              - { from: payload.txt, to: "\(server.url("/up/payload.txt"))", method: put }
            """)
        let r = try await harness.run(["apply", "--json", "--report", "report.json", "--junit", "first.xml",
                                       "--progress", "none"], environment: ["REPORT_SECRET": Self.secret])
        #expect(r.status == 1, "\(r.stderr)")

        let report = try String(contentsOfFile: harness.folder + "/report.json", encoding: .utf8)
        #expect(report == r.stdout, "--report writes what --json prints")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.map { $0["status"] as? String } == ["ok", "failed", "failed", "ok"])
        #expect(items.map { $0["error_code"] as? String } == [nil, "http", "connection", nil])
        #expect(items[0]["error_code"] is NSNull, "present, null when the entry did not fail")
        #expect(items.map { $0["http_status"] as? Int } == [nil, 404, nil, nil])
        // Every folder and the cache's records were flushed: present, and empty.
        #expect((object["warnings"] as? [Any])?.isEmpty == true, "\(object["warnings"] ?? "missing")")

        #expect(FileManager.default.fileExists(atPath: harness.folder + "/first.xml"))

        let again = try await harness.run(["apply", "--junit", "junit.xml", "--progress", "none"],
                                          environment: ["REPORT_SECRET": Self.secret])
        #expect(again.status == 1)
        let xml = try String(contentsOfFile: harness.folder + "/junit.xml", encoding: .utf8)
        #expect(!xml.contains(Self.secret) && !report.contains(Self.secret), "secrets stay masked")
        let junit = try await Self.parseJUnit(harness.folder + "/junit.xml")
        #expect(junit.tests == "4")
        #expect(junit.failures == "2")
        #expect(junit.cases.map(\.classname) == ["syncr.download", "syncr.download", "syncr.download", "syncr.upload"])
        #expect(junit.cases.map(\.name) == ["out/a.bin", "out/gone.bin", "out/<odd> & \"name\".bin",
                                            "payload.txt -> \(server.url("/up/payload.txt"))"])
        #expect(junit.cases[0].failure == nil, "up to date on the second run: passes")
        #expect(junit.cases[1].failure?.contains("404") == true)
        #expect(junit.cases[2].failure?.isEmpty == false)
        #expect(junit.cases.map(\.type) == [nil, "http", "connection", nil])
        #expect(junit.cases[3].failure == nil)

        // Both name the manifest by the SHA-256 of its bytes, read once for all of a run's reports.
        let sum = try await runProcess(executable: "sha256sum", arguments: [harness.folder + "/syncr.yml"])
        let digest = try #require(sum.stdout.split(separator: " ").first.map(String.init))
        #expect((object["manifest"] as? [String: Any])?["sha256"] as? String == digest)
        #expect(xml.contains(#"name="syncr.manifest_sha256" value="\#(digest)""#), "\(xml.prefix(400))")
    }

    /// An upload's start and finish lines in plain mode, and its count in the summary.
    @Test func uploadLinesAndSummary() async throws {
        let www = try TemporaryDirectory(prefix: "www-report-up")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let harness = try CLIHarness()
        try harness.write("payload.bin", String(repeating: "x", count: 70_000))
        try harness.write("syncr.yml", """
            version: 1
            uploads:
              - { from: payload.bin, to: "\(server.url("/up/payload.bin"))", method: put }
            """)
        let r = try await harness.run(["apply", "--progress", "plain"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("[1/1] upload payload.bin -> ") })
        #expect(lines.contains { $0.hasPrefix("  done upload payload.bin -> ") && $0.contains("68.4 KiB in ") })
        #expect(lines.last?.hasPrefix("syncr: 1 uploaded, 0 up to date, 0 failed; 0 B received, 68.4 KiB sent in ") == true,
                "\(r.stderr)")
    }
}
