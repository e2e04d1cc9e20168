import Foundation
import Testing

/// `plan --shard` and `apply --shard` against nginx: the shards split the manifest, the plan
/// says which shard it shows, and `--shard auto` names the variables it read.
@Suite("shards", .timeLimit(.minutes(5)))
struct ShardCLITests {
    static let names = (0..<12).map { "f\($0).bin" }

    /// nginx serving 12 files of distinct sizes, and a project whose manifest lists them all.
    static func setUp() async throws -> (Nginx, Project, TemporaryDirectory, [String: Int]) {
        let www = try TemporaryDirectory(prefix: "www-shard")
        var sizes: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            sizes["out/" + name] = 1000 + i * 337
            try makeFile(path: www.appending(name), size: 1000 + i * 337, seed: UInt64(i))
        }
        let nginx = try await Nginx.start(root: www.url)
        let project = try Project()
        try project.writeManifest(downloads: names.map { "{ url: \(nginx.url("/" + $0)), to: out/\($0) }" })
        return (nginx, project, www, sizes)
    }

    @Test func shardsSplitTheManifestAndThePlanSaysSo() async throws {
        let (nginx, project, www, sizes) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        var seen: [String: Int] = [:]
        for i in 1...3 {
            let r = try await project.run(["plan", "--json", "--shard", "\(i)/3"])
            #expect(r.exitCode == 0, "\(r.stderr)")
            let object = try jsonObject(r.stdout)
            let tos = items(object).compactMap { $0["to"] as? String }
            for to in tos {
                #expect(seen[to] == nil, "\(to) is in shard \(seen[to] ?? 0) and shard \(i)")
                seen[to] = i
            }
            let shard = try #require(object["shard"] as? [String: Any])
            #expect(shard["index"] as? Int == i)
            #expect(shard["count"] as? Int == 3)
            #expect(shard["method"] as? String == "hash")
            #expect(shard["entries"] as? Int == tos.count)
            #expect(shard["manifest_entries"] as? Int == 12)
            #expect(shard["bytes"] as? Int == tos.reduce(0) { $0 + sizes[$1]! })
            let text = try await project.run(["plan", "--shard=\(i)/3"])
            #expect(text.stdout.contains("Shard \(i)/3 (by hash of destination): \(tos.count) of 12 entries"), "\(text.stdout)")
        }
        #expect(Set(seen.keys) == Set(sizes.keys))
    }

    /// `--shard auto` in a GitLab job with `parallel: 3`, node 2: the same entries as `--shard
    /// 2/3`, and stderr names the variables.
    @Test func autoReadsGitLabsVariables() async throws {
        let (nginx, project, www, _) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let fixed = try await project.run(["plan", "--json", "--shard", "2/3"])
        let auto = try await project.run(["plan", "--json", "--shard", "auto"],
                                         environment: ["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"])
        #expect(auto.exitCode == 0, "\(auto.stderr)")
        #expect(auto.stderr.contains("shard 2/3 (--shard auto: CI_NODE_INDEX=2, CI_NODE_TOTAL=3 (GitLab))"), "\(auto.stderr)")
        let a = items(try jsonObject(fixed.stdout)).compactMap { $0["to"] as? String }
        let b = items(try jsonObject(auto.stdout)).compactMap { $0["to"] as? String }
        #expect(a == b && !a.isEmpty)
    }

    /// `apply --shard` fetches its own entries and no other: nginx sees only those.
    @Test func applyFetchesOnlyItsShard() async throws {
        let (nginx, project, www, _) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let plan = try await project.run(["plan", "--json", "--shard", "3/3"])
        let mine = Set(items(try jsonObject(plan.stdout)).compactMap { $0["to"] as? String })
        let before = try await nginx.settledAccessLog().count
        let r = try await project.run(["apply", "--shard", "3/3", "--progress", "none"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        for name in Self.names {
            #expect(project.exists("out/" + name) == mine.contains("out/" + name), "out/\(name)")
        }
        let paths = Set(try await nginx.settledAccessLog().dropFirst(before).map(\.path))
        #expect(paths == Set(mine.map { "/" + $0.dropFirst(4) }), "requests: \(paths)")
    }

    /// A lock that lacks an entry, or locks another URL for one, fails every shard of a
    /// locked run alike, before any request: only the shard holding that entry failed, and a
    /// CI matrix showed the others green.
    @Test func aStaleLockFailsEveryShard() async throws {
        let (nginx, project, www, _) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let lock = try await project.run(["lock"])
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        var entries = Self.names.map { "{ url: \(nginx.url("/" + $0)), to: out/\($0) }" }
        try project.writeManifest(downloads: entries + ["{ url: \(nginx.url("/f0.bin")), to: out/new.bin }"])
        let before = try await nginx.settledAccessLog().count
        for i in 1...3 {
            for command in ["plan", "apply"] {
                let r = try await project.run([command, "--locked", "--shard", "\(i)/3"]
                                              + (command == "apply" ? ["--progress", "none"] : []))
                #expect(r.exitCode == 65, "\(command) shard \(i): \(r.stderr)")
                #expect(r.stderr.hasSuffix("syncr: error: --locked: syncr.yml: downloads[12] (to: out/new.bin) is not in syncr.lock; "
                    + "run 'syncr lock' to add it\n"), "\(command) shard \(i): \(r.stderr)")
            }
        }
        entries[5] = "{ url: \(nginx.url("/f6.bin")), to: out/f5.bin }"
        try project.writeManifest(downloads: entries)
        for i in 1...3 {
            let r = try await project.run(["plan", "--locked", "--shard", "\(i)/3"])
            #expect(r.exitCode == 65, "shard \(i): \(r.stderr)")
            #expect(r.stderr.contains("downloads[5] (to: out/f5.bin): syncr.lock locks \(nginx.url("/f5.bin")), "
                + "the manifest asks for \(nginx.url("/f6.bin"))"), "shard \(i): \(r.stderr)")
        }
        #expect(try await nginx.settledAccessLog().count == before, "no request")
        #expect(!project.exists("out"), "nothing was fetched")
    }

    /// An explicit shard is said on stderr as `--shard auto`'s is, by plan and apply: it said
    /// nothing, and apply's summary ("0 transferred, 4 up to date") read like the whole
    /// manifest's. `--quiet` leaves it out, as it does auto's.
    @Test func anExplicitShardIsSaidAsAutosIs() async throws {
        let (nginx, project, www, _) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        for command in [["plan"], ["plan", "--json"], ["apply", "--progress", "none"]] {
            let r = try await project.run(command + ["--shard", "2/3"])
            #expect(r.exitCode == 0, "\(command): \(r.stderr)")
            #expect(r.stderr.hasPrefix("syncr: shard 2/3 (--shard 2/3)\n"), "\(command): \(r.stderr)")
        }
        let auto = try await project.run(["apply", "--progress", "none", "--shard", "auto"], environment: ["SYNCR_SHARD": "2/3"])
        #expect(auto.stderr.hasPrefix("syncr: shard 2/3 (--shard auto: SYNCR_SHARD=2/3"), "\(auto.stderr)")
        for shard in ["2/3", "auto"] {
            let quiet = try await project.run(["apply", "--quiet", "--shard", shard], environment: ["SYNCR_SHARD": "2/3"])
            #expect(quiet.exitCode == 0, "\(quiet.stderr)")
            #expect(!quiet.stderr.contains("syncr: shard"), "\(shard): \(quiet.stderr)")
        }
    }

    @Test func autoWithNothingSetFailsNamingTheVariables() async throws {
        let (nginx, project, www, _) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let r = try await project.run(["apply", "--shard", "auto"])
        #expect(r.exitCode == 64)
        for name in ["CI_NODE_INDEX", "JOB_COMPLETION_INDEX", "SYNCR_SHARD_TOTAL", "BUILDKITE_PARALLEL_JOB", "CIRCLE_NODE_INDEX", "SYNCR_SHARD"] {
            #expect(r.stderr.contains(name), "\(r.stderr)")
        }
        #expect(!project.exists("out"), "nothing was fetched")
    }

    @Test(arguments: ["0/3", "4/3", "3", "x"])
    func badShardIsAUsageError(value: String) async throws {
        let r = try await CLIHarness().run(["plan", "--shard", value])
        #expect(r.status == 64)
        #expect(r.stderr.contains("'--shard' takes I/N"), "\(r.stderr)")
    }
}
