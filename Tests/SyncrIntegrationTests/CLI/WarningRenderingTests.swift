#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import syncr
@testable import SyncrCore

/// What failed at the end of a run without failing an entry (`RunWarning`) reaches every
/// output: `apply --json` and `--report` as `warnings`, `--junit` as the suite's `system-err`,
/// never as a failure of an entry.
@Suite(.timeLimit(.minutes(5)))
struct WarningRenderingTests {
    static let warnings: [RunWarning] = [
        .folderNotFlushed(FileError(path: "/data/a&b <out>", operation: "flush the folder", errno: EIO)),
        .recordsNotFlushed(FileError(path: "/data/.syncr/cache/records.journal", operation: "write", errno: ENOSPC)),
    ]
    static let report = ApplyReport(results: [], seconds: 1.5, warnings: warnings)

    @Test func theJSONReportListsEachWarningWithItsCodePathAndMessage() throws {
        let text = Rendering.applyJSON(Self.report, plan: Plan(items: []))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [[String: String]])
        #expect(warnings.map { $0["code"] } == ["folder_not_flushed", "records_not_flushed"])
        #expect(warnings.map { $0["path"] } == ["/data/a&b <out>", "/data/.syncr/cache/records.journal"])
        #expect(warnings.map { $0["message"] } == Self.warnings.map(\.description))
        #expect(warnings[1]["message"]?.contains("No space left on device") == true)
    }

    @Test func theJUnitReportGivesThemAsTheSuitesErrorOutputNotAsFailures() {
        let xml = JUnitReport.xml(Self.report, manifest: "syncr.yml")
        #expect(xml.contains("failures=\"0\" errors=\"0\""))
        #expect(!xml.contains("<failure"))
        // One element, a line per warning (the newline escaped, as XML attributes and text
        // keep it).
        #expect(xml.components(separatedBy: "<system-err>").count == 2, "\(xml)")
        #expect(xml.contains("<system-err>warning: /data/a&amp;b &lt;out&gt;: cannot flush the folder"))
        #expect(xml.contains("&#10;warning: /data/.syncr/cache/records.journal: cannot write: No space left on device"))
        #expect(xml.contains("the files are in place, but the next run may download some of them again"))
        #expect(xml.contains("</system-err>\n  </testsuite>"))
    }

    /// The warnings said at the start of apply come first, in the same form, with their codes;
    /// `plan --json` gives them as strings (version 1) and as objects in `warning_details`.
    @Test func warningsFromTheStartOfTheRunComeFirstWithTheirCodes() throws {
        let start: [PlanWarning] = [.notEnoughSpace(folder: "/data/out", needed: 3 << 30, available: 1 << 30),
                                    .netrcUnreadable(path: "/nonexistent", errno: ENOENT)]
        let text = Rendering.applyJSON(Self.report, plan: Plan(items: [], warnings: start))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [[String: String]])
        #expect(warnings.map { $0["code"] } == ["not_enough_space", "netrc_unreadable", "folder_not_flushed", "records_not_flushed"])
        #expect(warnings.map { $0["path"] } == ["/data/out", "/nonexistent", "/data/a&b <out>", "/data/.syncr/cache/records.journal"])
        #expect(warnings.map { $0["message"] } == start.map(\.description) + Self.warnings.map(\.description))

        let plan = try #require(try JSONSerialization.jsonObject(with: Data(Rendering.planJSON(Plan(items: [], warnings: start)).utf8))
            as? [String: Any])
        #expect(plan["warnings"] as? [String] == start.map(\.description))
        #expect(plan["warning_details"] as? [[String: String]] == Array(warnings.prefix(2)))

        let xml = JUnitReport.xml(Self.report, manifest: "syncr.yml", warnings: start)
        #expect(xml.components(separatedBy: "<system-err>").count == 2, "\(xml)")
        #expect(xml.contains("<system-err>warning: downloads need 3.0 GiB in /data/out"), "\(xml)")
        #expect(xml.contains("&#10;warning: netrc: true, but /nonexistent cannot be read (No such file or directory)"))
        #expect(xml.contains("&#10;warning: /data/a&amp;b &lt;out&gt;: cannot flush the folder"))
    }

    @Test func aRunWithoutWarningsSaysSo() throws {
        let quiet = ApplyReport(results: [], seconds: 0)
        let text = Rendering.applyJSON(quiet, plan: Plan(items: []))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((object["warnings"] as? [Any])?.isEmpty == true)
        #expect(!JUnitReport.xml(quiet, manifest: "syncr.yml").contains("system-err"))
    }
}
