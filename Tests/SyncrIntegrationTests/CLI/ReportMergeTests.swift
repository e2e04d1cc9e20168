import Foundation
import Testing

/// `syncr report merge`: the reports of a sharded apply, merged, equal the report of one
/// unsharded apply in entries and totals; inputs that do not belong together are refused.
@Suite("report merge", .timeLimit(.minutes(5)))
struct ReportMergeTests {
    static let names = (0..<9).map { "m\($0).bin" }

    static func setUp() async throws -> (Nginx, TemporaryDirectory, [String]) {
        let www = try TemporaryDirectory(prefix: "www-merge")
        for (i, name) in names.enumerated() { _ = try makeFile(path: www.appending(name), size: 500 + i * 911, seed: UInt64(i)) }
        let nginx = try await Nginx.start(root: www.url)
        // One entry fails (404), so failures are merged too.
        let downloads = names.map { "{ url: \(nginx.url("/" + $0)), to: out/\($0) }" } + ["{ url: \(nginx.url("/gone.bin")), to: out/gone.bin }"]
        return (nginx, www, downloads)
    }

    /// Items without their timings, and totals without `seconds`: what two runs of the same work share.
    static func comparable(_ object: [String: Any]) -> ([NSDictionary], NSDictionary) {
        let items = items(object).map { item -> NSDictionary in
            var item = item
            item["seconds"] = nil
            return item as NSDictionary
        }
        var totals = object["totals"] as? [String: Any] ?? [:]
        totals["seconds"] = nil
        return (items, totals as NSDictionary)
    }

    @Test func mergedShardReportsEqualOneUnshardedRun() async throws {
        let (nginx, www, downloads) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let whole = try Project()
        try whole.writeManifest(downloads: downloads)
        let single = try await whole.run(["apply", "--progress", "none", "--report", "full.json"])
        #expect(single.exitCode == 1, "one entry fails: \(single.stderr)")

        let sharded = try Project()
        try sharded.writeManifest(downloads: downloads)
        var files: [String] = []
        for i in 1...3 {
            _ = try await sharded.run(["apply", "--progress", "none", "--shard", "\(i)/3", "--report", "r\(i).json", "--junit", "j\(i).xml"])
            files.append("r\(i).json")
        }
        // Given out of order: the merge puts entries back in manifest order.
        let merge = try await sharded.run(["report", "merge", "-o", "merged.json"] + files.reversed())
        #expect(merge.exitCode == 0, "\(merge.stderr)")
        let merged = try jsonObject(String(contentsOf: sharded.file("merged.json"), encoding: .utf8))
        let full = try jsonObject(String(contentsOf: whole.file("full.json"), encoding: .utf8))
        let (mergedItems, mergedTotals) = Self.comparable(merged)
        let (fullItems, fullTotals) = Self.comparable(full)
        #expect(mergedItems.count == 10)
        #expect(mergedItems == fullItems)
        #expect(mergedTotals == fullTotals, "merged \(mergedTotals) vs single \(fullTotals)")
        let shards = try #require(merged["shards"] as? [[String: Any]])
        #expect(shards.compactMap { $0["index"] as? Int } == [1, 2, 3])
        #expect(shards.compactMap { $0["file"] as? String } == ["r1.json", "r2.json", "r3.json"])

        let junit = try await sharded.run(["report", "merge", "--output=merged.xml", "j2.xml", "j1.xml", "j3.xml"])
        #expect(junit.exitCode == 0, "\(junit.stderr)")
        let script = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            cases = [c.get("name") for s in root.findall("testsuite") for c in s.findall("testcase")]
            fails = [c.get("name") for s in root.findall("testsuite") for c in s.findall("testcase") if c.find("failure") is not None]
            print(root.get("tests"), root.get("failures"), len(root.findall("testsuite")), len(set(cases)), ",".join(fails))
            print(";".join(s.get("name") for s in root.findall("testsuite")))
            """
        let parsed = try await runProcess(executable: "python3", arguments: ["-c", script, sharded.file("merged.xml").path])
        // Each shard's suite is named by its shard: CI test views fold suites of one name.
        #expect(parsed.stdout == "10 1 3 10 out/gone.bin\nsyncr apply syncr.yml (shard 1/3);syncr apply syncr.yml (shard 2/3);"
                + "syncr apply syncr.yml (shard 3/3)\n", "\(parsed.stdout)\(parsed.stderr)")
    }

    @Test func refusesReportsThatDoNotBelongTogether() async throws {
        let (nginx, www, downloads) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let project = try Project()
        try project.writeManifest(downloads: downloads)
        for i in 1...2 {
            _ = try await project.run(["apply", "--progress", "none", "--shard", "\(i)/3", "--report", "r\(i).json", "--junit", "j\(i).xml"])
        }
        _ = try await project.run(["apply", "--progress", "none", "--shard", "1/2", "--report", "half.json"])
        _ = try await project.run(["apply", "--progress", "none", "--report", "all.json"])
        try FileManager.default.copyItem(at: project.file("r1.json"), to: project.file("copy.json"))
        let other = try Project()
        try other.writeManifest(downloads: Array(downloads.prefix(3)))
        _ = try await other.run(["apply", "--progress", "none", "--shard", "3/3", "--report", "r3.json"])
        try FileManager.default.copyItem(at: other.file("r3.json"), to: project.file("other.json"))

        let cases: [([String], String)] = [
            (["r1.json", "copy.json"], "r1.json (shard 1/3) and copy.json (shard 1/3) overlap"),
            (["r1.json", "all.json"], "r1.json (shard 1/3) and all.json (the whole manifest (no --shard)) overlap"),
            (["r1.json", "half.json"], "r1.json is shard 1/3 but half.json is shard 1/2"),
            (["r1.json", "other.json"], "r1.json and other.json come from different manifests"),
            (["r1.json", "j2.xml"], "cannot merge JUnit files (j2.xml) with JSON reports (r1.json)"),
            (["j1.xml", "j1.xml"], "j1.xml (shard 1/3) and j1.xml (shard 1/3) overlap"),
        ]
        for (inputs, message) in cases {
            let r = try await project.run(["report", "merge", "-o", "out.json"] + inputs)
            #expect(r.exitCode == 1, "\(inputs)")
            #expect(r.stderr.contains(message), "\(inputs): \(r.stderr)")
            #expect(!project.exists("out.json"), "nothing written for \(inputs)")
        }
        let absent = try await project.run(["report", "merge", "-o", "out.json", "r1.json", "nope.json"])
        #expect(absent.exitCode == 1 && absent.stderr.contains("cannot read nope.json: No such file or directory"), "\(absent.stderr)")
        // A shard's report missing fails the merge (it exited 0, and a CI merge step passed for
        // an incomplete run), the merged file written all the same.
        let partial = try await project.run(["report", "merge", "-o", "out.json", "r1.json", "r2.json"])
        #expect(partial.exitCode == 1, "\(partial.stderr)")
        #expect(partial.stderr == "syncr: merged 2 reports into out.json\n"
            + "syncr: error: shard 3/3 missing: the merged report covers 2 of 3; merge again with every shard's report "
            + "(run again the shards whose jobs wrote none)\n", "\(partial.stderr)")
        // The merged files say so too: a job that died before writing its report must not
        // publish as a whole run.
        let merged = try jsonObject(try String(contentsOf: project.file("out.json"), encoding: .utf8))
        let warnings = try #require(merged["warnings"] as? [[String: Any]])
        #expect(warnings.contains { $0["code"] as? String == "shards_missing"
            && ($0["message"] as? String)?.contains("shard 3/3 missing") == true }, "\(warnings)")
        let junit = try await project.run(["report", "merge", "-o", "out.xml", "j1.xml", "j2.xml"])
        #expect(junit.exitCode == 1, "\(junit.stderr)")
        #expect(junit.stderr.contains("syncr: error: shard 3/3 missing: the merged report covers 2 of 3;"), "\(junit.stderr)")
        let xml = try String(contentsOf: project.file("out.xml"), encoding: .utf8)
        #expect(xml.contains(#"<testcase name="shards missing" classname="syncr"><error type="shards_missing" message="shard 3/3 missing"#), "\(xml)")
        let counts = try await runProcess(executable: "python3", arguments: ["-c", """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            print(root.get("errors"), sum(len(s.findall("testcase")) == int(s.get("tests")) for s in root.findall("testsuite")))
            """, project.file("out.xml").path])
        #expect(counts.stdout.hasPrefix("1 "), "valid XML, the missing shards counted as an error: \(counts.stdout)\(counts.stderr)")
    }

    /// A report names the manifest by the bytes that were parsed: given on a pipe, the file read
    /// again at the end was empty, and two different manifests looked like one.
    @Test func aManifestReadFromAPipeIsNamedByItsBytes() async throws {
        let project = try Project()
        let text = "version: 1\ndownloads: []\n"
        try text.write(to: project.file("copy.yml"), atomically: true, encoding: .utf8)
        let binary = try #require(CLIHarness.binary)
        let r = try await runProcess(executable: binary, arguments: ["apply", "--report", "r.json", "/dev/stdin"],
                                     cwd: project.folder.url, stdin: Data(text.utf8))
        #expect(r.exitCode == 0, "\(r.stderr)")
        let report = try jsonObject(try String(contentsOf: project.file("r.json"), encoding: .utf8))
        let named = (report["manifest"] as? [String: Any])?["sha256"] as? String
        #expect(named == (try await sha256(file: project.file("copy.yml"))), "\(report)")
    }

    /// The objects of an `s3://` prefix download share their entry's index: the merge keeps
    /// each (ordered by destination, as the listing is), and still refuses a real duplicate.
    @Test func keepsTheObjectsOfOnePrefixApart() async throws {
        let project = try Project()
        func item(_ index: Int, _ to: String) -> String {
            #"{"index":\#(index),"kind":"download","url":"s3://b/p/\#(to)","to":"\#(to)","action":"download","size":1,"#
                + #""offset":0,"bytes":1,"reason":"","status":"ok","transferred":1,"seconds":0.1,"error":null,"error_code":null}"#
        }
        func report(_ items: [String]) -> String {
            #"{"version":1,"manifest":{"path":"syncr.yml","sha256":"5e1f"},"items":["# + items.joined(separator: ",")
                + #"],"totals":{"ok":\#(items.count),"seconds":0.3}}"#
        }
        try report([item(1, "plain.bin"), item(0, "data/b.bin"), item(0, "data/a.bin")])
            .write(to: project.file("prefix.json"), atomically: true, encoding: .utf8)
        let merge = try await project.run(["report", "merge", "-o", "merged.json", "prefix.json"])
        #expect(merge.exitCode == 0, "\(merge.stderr)")
        let merged = try jsonObject(String(contentsOf: project.file("merged.json"), encoding: .utf8))
        #expect(items(merged).compactMap { $0["to"] as? String } == ["data/a.bin", "data/b.bin", "plain.bin"])

        try report([item(0, "data/a.bin"), item(0, "data/a.bin")])
            .write(to: project.file("twice.json"), atomically: true, encoding: .utf8)
        let twice = try await project.run(["report", "merge", "-o", "out.json", "twice.json"])
        #expect(twice.exitCode == 1)
        #expect(twice.stderr.contains("both report downloads[0] (data/a.bin)"), "\(twice.stderr)")
    }

    /// Shards split two ways (by hash, and by bytes with a lockfile) may both leave an entry
    /// out: refused, from JSON and JUnit alike. A shard count too large to list is named in
    /// part, at once.
    @Test func refusesShardsSplitTwoWaysAndNamesMissingShardsInPart() async throws {
        let project = try Project()
        func report(index: Int, count: Int, method: String) -> String {
            #"{"version":1,"manifest":{"path":"syncr.yml","sha256":"5e1f"},"#
                + #""shard":{"index":\#(index),"count":\#(count),"method":"\#(method)","entries":1,"manifest_entries":3,"bytes":1},"#
                + #""items":[{"index":\#(index - 1),"kind":"download","url":"http://h/\#(index)","to":"f\#(index)","#
                + #""action":"download","size":1,"offset":0,"bytes":1,"reason":"","status":"ok","transferred":1,"#
                + #""seconds":0.1,"error":null,"error_code":null}],"totals":{"ok":1,"seconds":0.1}}"#
        }
        try report(index: 1, count: 3, method: "hash").write(to: project.file("h1.json"), atomically: true, encoding: .utf8)
        try report(index: 2, count: 3, method: "bytes").write(to: project.file("b2.json"), atomically: true, encoding: .utf8)
        let mixed = try await project.run(["report", "merge", "-o", "out.json", "h1.json", "b2.json"])
        #expect(mixed.exitCode == 1, "\(mixed.stderr)")
        #expect(mixed.stderr.contains("h1.json was split by hash and b2.json by bytes"), "\(mixed.stderr)")

        try report(index: 1, count: Int(Int64.max), method: "hash").write(to: project.file("huge.json"), atomically: true, encoding: .utf8)
        let huge = try await project.run(["report", "merge", "-o", "out.json", "huge.json"])
        #expect(huge.exitCode == 1, "\(huge.stderr)")
        #expect(huge.stderr.contains("shards 2/\(Int64.max), 3/\(Int64.max)"), "\(huge.stderr)")
        #expect(huge.stderr.contains(" and \(Int64.max - 11) more missing: the merged report covers 1 of \(Int64.max)"), "\(huge.stderr)")
    }

    /// Each shard's run warnings (a folder it could not flush) reach the merged report, in
    /// shard order, each once; a report from before warnings existed has none to give.
    @Test func keepsEveryShardsWarnings() async throws {
        let project = try Project()
        func report(shard: Int, to: String, warnings: String?) -> String {
            #"{"version":1,"manifest":{"path":"syncr.yml","sha256":"5e1f"},"#
                + #""shard":{"index":\#(shard),"count":3,"method":"hash","entries":1,"manifest_entries":3,"bytes":1},"#
                + #""items":[{"index":\#(shard - 1),"kind":"download","url":"http://h/\#(to)","to":"\#(to)","#
                + #""action":"download","size":1,"offset":0,"bytes":1,"reason":"","status":"ok","transferred":1,"#
                + #""seconds":0.1,"error":null,"error_code":null}],"totals":{"ok":1,"seconds":0.1}"#
                + (warnings.map { #","warnings":"# + $0 } ?? "") + "}"
        }
        func warning(_ path: String) -> String {
            #"{"code":"folder_not_flushed","path":"\#(path)","message":"\#(path): cannot flush the folder"}"#
        }
        try report(shard: 3, to: "c.bin", warnings: "[" + warning("/c") + "]")
            .write(to: project.file("s3.json"), atomically: true, encoding: .utf8)
        try report(shard: 1, to: "a.bin", warnings: "[" + warning("/a1") + "," + warning("/a2") + "]")
            .write(to: project.file("s1.json"), atomically: true, encoding: .utf8)
        try report(shard: 2, to: "b.bin", warnings: nil)
            .write(to: project.file("s2.json"), atomically: true, encoding: .utf8)
        // The same warning from two shards (both runners lack the netrc file) is said once.
        try report(shard: 3, to: "c.bin", warnings: "[" + warning("/c") + "," + warning("/a2") + "]")
            .write(to: project.file("s3.json"), atomically: true, encoding: .utf8)
        let merge = try await project.run(["report", "merge", "-o", "merged.json", "s3.json", "s1.json", "s2.json"])
        #expect(merge.exitCode == 0, "\(merge.stderr)")
        let merged = try jsonObject(String(contentsOf: project.file("merged.json"), encoding: .utf8))
        let warnings = try #require(merged["warnings"] as? [[String: Any]])
        #expect(warnings.compactMap { $0["path"] as? String } == ["/a1", "/a2", "/c"])
        #expect(warnings.allSatisfy { $0["code"] as? String == "folder_not_flushed" })
    }

    @Test(arguments: [
        (["report"], "'report' needs 'merge'"),
        (["report", "merge", "a.json"], "needs -o OUT"),
        (["report", "merge", "-o", "x.json"], "needs the report files"),
        (["report", "mrge", "-o", "x", "a"], "Unknown report command 'mrge'"),
    ])
    func usageErrors(arguments: [String], message: String) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }
}
