#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrCore
import Testing

/// `syncr apply` against real servers on 127.0.0.1: nginx for the normal case, the fault server
/// for everything a real server does only on a bad day.
@Suite("downloads", .timeLimit(.minutes(5)))
struct DownloadTests {
    /// Leaves a partial download of `path` in the project's cache, `bytes` long, the way a crash
    /// does: the server stalls after `bytes`, the record catches up, and syncr is killed.
    func makePartial(_ project: Project, _ server: FaultServer, path: String, bytes: Int) async throws {
        try await server.behave(path: path, FaultBehaviour(stallAfter: bytes, stallTimes: 1))
        let child = try project.start(["apply"])
        // The moment lasts until the stall times out (`timeout`, 5 s) and the retry finishes the
        // file, so it is watched, and syncr killed, from a thread of its own.
        let recorded = await pollOnItsOwnThread(timeout: .seconds(30)) {
            guard project.recordedGoodBytes() == bytes else { return false }
            kill(child.pid, SIGKILL)
            return true
        }
        kill(child.pid, SIGKILL)
        await child.ended()
        try #require(recorded, "the cache should record \(bytes) bytes")
        try await server.reset()
    }

    /// Files from one plain-http server go `jobs` at a time from the start: while the first
    /// one still comes (slowly), the others are asked for. They waited for the first file's
    /// lead request to end: curl kept them for a multiplexed connection that plain http never
    /// gives.
    @Test func oneSlowFileDoesNotHoldBackTheOthersFromItsServer() async throws {
        let www = try TemporaryDirectory(prefix: "www-jobs")
        let size = 400_000
        for i in 1...4 { try makeFile(path: www.appending("q\(i).bin"), size: size, seed: UInt64(90 + i)) }
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // 20 s for the whole of q1.
        try await server.behave(path: "/q1.bin", FaultBehaviour(rate: 20_000))
        let project = try Project()
        try project.writeManifest(defaults: "{ jobs: 4, retries: 0 }",
                                  downloads: (1...4).map { "{ url: \(server.url("/q\($0).bin")), to: out/q\($0).bin }" })
        let child = try project.start(["apply"])
        defer { child.terminate() }
        var firstSentWhenOthersCame = size
        let others = try await poll(timeout: .seconds(60)) {
            let stats = try await server.stats()
            guard (2...4).allSatisfy({ stats["/q\($0).bin"].requests == 1 }) else { return false }
            firstSentWhenOthersCame = stats["/q1.bin"].bytesSent
            return true
        }
        #expect(others)
        #expect(firstSentWhenOthersCame < size, "q2-q4 were asked for while q1 was still coming")
    }

    // MARK: nginx

    /// A run killed while copying across file systems or unpacking (or swapping the unpacked
    /// folder in) leaves a temporary name
    /// beside the destination. The next run removes it, even when the entry is up to date, and
    /// leaves the names of other entries alone.
    @Test func leftoversOfAKilledRunGoWithTheNextRun() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 1000, seed: 5)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/a.bin")), to: out/a.bin }"])
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let key = Cache.key(for: nginx.url("/a.bin"))
        try Data("half a copy".utf8).write(to: project.file("out/.syncr-\(key).tmp"))
        try FileManager.default.createDirectory(at: project.file("out/.syncr-unpack-\(key)/deep"),
                                                withIntermediateDirectories: true)
        try Data("x".utf8).write(to: project.file("out/.syncr-unpack-\(key)/deep/x"))
        // The old folder moved aside where two folders cannot be swapped in one step.
        try FileManager.default.createDirectory(at: project.file("out/.syncr-unpack-\(key).old/deep"),
                                                withIntermediateDirectories: true)
        let others = "out/.syncr-\(String(repeating: "0", count: 32)).tmp"
        try Data("another entry's".utf8).write(to: project.file(others))

        let second = try await project.run(["apply"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 transferred, 1 up to date"), "\(second.stderr)")
        #expect(!project.exists("out/.syncr-\(key).tmp"))
        #expect(!project.exists("out/.syncr-unpack-\(key)"))
        #expect(!project.exists("out/.syncr-unpack-\(key).old"))
        #expect(project.exists(others), "another entry's name is not touched")
        #expect(try await sha256(file: project.file("out/a.bin")) == (try await sha256(file: www.appending("a.bin"))))
    }

    /// A manifest reached through a linked folder (a deployment's `current -> releases/42`), with
    /// a destination under another link: both are written through the links, as `mkdir -p`
    /// would, not refused as "a file in the way".
    @Test func linkedFoldersAreWrittenThrough() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 1000, seed: 8)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let release = try project.folder.makeDirectory("releases/42")
        try FileManager.default.createDirectory(at: release.appendingPathComponent("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: release.appendingPathComponent("data").path, withDestinationPath: "real")
        try FileManager.default.createSymbolicLink(atPath: project.file("current").path, withDestinationPath: "releases/42")
        try "version: 1\ndownloads:\n  - { url: \(nginx.url("/a.bin")), to: data/sub/a.bin }\n"
            .write(to: release.appendingPathComponent("syncr.yml"), atomically: true, encoding: .utf8)
        let run = try await project.run(["apply", project.file("current/syncr.yml").path])
        #expect(run.exitCode == 0, "\(run.stderr)")
        #expect(try await sha256(file: release.appendingPathComponent("real/sub/a.bin")) == (try await sha256(file: www.appending("a.bin"))))
        #expect(project.exists("releases/42/.syncr/cache/records.journal"))
    }

    @Test func secondRunSkipsWithoutFetching() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 3 << 20, seed: 1)
        try makeFile(path: www.appending("b.bin"), size: 1000, seed: 2)
        try makeFile(path: www.appending("empty.bin"), size: 0, seed: 3)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(nginx.url("/a.bin")), to: out/a.bin, sha256: \(try await sha256(file: www.appending("a.bin"))) }",
            "{ url: \(nginx.url("/b.bin")), to: out/deep/er/b.bin }",
            "{ url: \(nginx.url("/empty.bin")), to: out/empty.bin }",
        ])
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        for name in ["a.bin", "deep/er/b.bin", "empty.bin"] {
            let source = www.appending((name as NSString).lastPathComponent)
            #expect(try await sha256(file: project.file("out/" + name)) == (try await sha256(file: source)))
        }
        let before = try await nginx.settledAccessLog().count
        let second = try await project.run(["apply", "--json"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        let report = try jsonObject(second.stdout)
        #expect(items(report).count == 3, "\(second.stdout)")
        #expect(items(report).allSatisfy { $0["action"] as? String == "skip" && $0["status"] as? String == "skipped" })
        #expect(items(report).allSatisfy { $0["transferred"] as? Int == 0 })
        let secondRun = try await nginx.settledAccessLog().dropFirst(before)
        #expect(secondRun.count >= 3, "each entry is asked about: \(secondRun)")
        #expect(secondRun.allSatisfy { $0.method == "HEAD" }, "the second run only asks, never fetches")

        let plan = try await project.run(["plan", "--detailed-exitcode"])
        #expect(plan.exitCode == 0)
        #expect(plan.stdout.contains("Nothing to do"))
    }

    /// One URL fetched to three places at once, each over several connections. They once shared
    /// a cache entry: one `.data` file truncated and written by all three, and moved away by the
    /// first to finish, so the others failed (or could have put a mix in place).
    @Test func oneURLToSeveralDestinationsAtOnce() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 8 << 20, seed: 6)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let destinations = ["out/one.bin", "out/deep/two.bin", "three.bin"]
        try project.writeManifest(defaults: "{ retries: 0, timeout: 10s, jobs: 3, connections: 4, min_split: 1MiB }",
                                  downloads: destinations.map { "{ url: \(nginx.url("/a.bin")), to: \($0) }" })
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        #expect(first.stderr.contains("3 downloaded"), "\(first.stderr)")
        let expected = try await sha256(file: www.appending("a.bin"))
        for d in destinations {
            #expect(try await sha256(file: project.file(d)) == expected, "\(d)")
        }

        let before = try await nginx.settledAccessLog().count
        let second = try await project.run(["apply"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 transferred, 3 up to date"), "\(second.stderr)")
        let secondRun = try await nginx.settledAccessLog().dropFirst(before)
        #expect(secondRun.allSatisfy { $0.method == "HEAD" }, "each has its own record: \(secondRun)")
    }

    @Test func planIsByteExactAndDetailedExitCodeSaysWork() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 123_457, seed: 4)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/a.bin")), to: a.bin }"])
        let plan = try await project.run(["plan", "--json", "--detailed-exitcode"])
        #expect(plan.exitCode == 2)
        let object = try jsonObject(plan.stdout)
        #expect(object["version"] as? Int == 1)
        let item = try #require(items(object).first)
        #expect(item["kind"] as? String == "download")
        #expect(item["action"] as? String == "download")
        #expect(item["size"] as? Int == 123_457)
        #expect(item["bytes"] as? Int == 123_457)
        #expect(item["offset"] as? Int == 0)
        #expect(item["to"] as? String == "a.bin")
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["download_bytes"] as? Int == 123_457)
        #expect(totals["download"] as? Int == 1)
        #expect(!project.exists("a.bin"), "plan changes nothing")
    }

    // MARK: crash and resume

    @Test func killDuringDownloadThenRerunFetchesOnlyTheRest() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        // The stall comes within the lead request (the first 2 MiB of a file of unknown size).
        let size = 8 << 20, stallAt = 1 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 5)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        // The transfer stalls after 1 MiB; once the record vouches for it, kill -9.
        try await makePartial(project, server, path: "/big.bin", bytes: stallAt)
        #expect(!project.exists("big.bin"), "no partial file at the destination")
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["action"] as? String == "resume")
        #expect(item["offset"] as? Int == stallAt)
        #expect(item["bytes"] as? Int == size - stallAt)

        let second = try await project.run(["apply"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let stats = try await server.stats()["/big.bin"]
        #expect(stats.bytesSent == size - stallAt, "only the missing bytes were fetched")
        #expect(stats.ranges == ["bytes=\(stallAt)-"])
        #expect(stats.ifRanges.count == 1, "the resume carried If-Range")
    }

    @Test func resumeAgainstServerThatIgnoresRangeYieldsTheRightFile() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 2 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 6)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        try await makePartial(project, server, path: "/f.bin", bytes: 700_000)
        #expect(!project.exists("f.bin"))

        // Second run: the server claims ranges but answers 200 with the whole body.
        try await server.behave(path: "/f.bin", FaultBehaviour(ignoreRange: true))
        let second = try await project.run(["apply", "--json"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
        let item = try #require(items(try jsonObject(second.stdout)).first)
        #expect((item["notes"] as? [String])?.contains { $0.contains("ignored the Range") } == true)
    }

    @Test func contentChangedBetweenRunsIsNeverSpliced() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 2 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 7)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        try await makePartial(project, server, path: "/f.bin", bytes: 1_000_000)

        // Same size, new bytes, new ETag.
        let replacement = try TemporaryDirectory(prefix: "new")
        try makeFile(path: replacement.appending("f.bin"), size: size, seed: 8)
        try await server.put(path: "/f.bin", from: replacement.appending("f.bin"))
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["action"] as? String == "restart")
        #expect((item["reason"] as? String)?.contains("changed") == true)

        let second = try await project.run(["apply"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: replacement.appending("f.bin"))))
    }

    // MARK: checksums

    @Test func checksumMismatchLeavesTheDestinationUntouched() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 50_000, seed: 11)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try "the old, good content\n".write(to: project.file("f.bin"), atomically: true, encoding: .utf8)
        let wrong = String(repeating: "ab", count: 32)
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/f.bin")), to: f.bin, sha256: \(wrong.uppercased()) }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("sha256 mismatch"))
        #expect(result.stderr.contains(nginx.url("/f.bin")))
        #expect(try String(contentsOf: project.file("f.bin"), encoding: .utf8) == "the old, good content\n")
        #expect(project.cacheStates().isEmpty, "the bad download was discarded")
    }

    @Test func destinationMatchingThePinnedChecksumIsSkippedWithoutDownloading() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 70_000, seed: 12)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try FileManager.default.copyItem(at: www.appending("f.bin"), to: project.file("f.bin"))
        let digest = try await sha256(file: www.appending("f.bin"))
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/f.bin")), to: f.bin, sha256: \(digest) }"])
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let item = try #require(items(try jsonObject(result.stdout)).first)
        #expect(item["action"] as? String == "skip")
        let log = try await nginx.settledAccessLog()
        #expect(!log.contains { $0.method == "GET" }, "nothing was fetched: \(log)")
    }

    // MARK: servers on a bad day

    /// A 503 with `Retry-After: 2` is retried no sooner than two seconds later, as the server
    /// sees it (a lower bound on the gap between its requests, which no machine's slowness can
    /// make hold by chance: without `Retry-After` the first retry comes within half a second).
    @Test func retryAfterIsHonouredAndTheFileArrives() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 100_000, seed: 13)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(status: 503, retryAfter: "2", statusTimes: 1, statusOn: .get))
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("retry"))
        #expect(result.stderr.contains("503"))
        let stats = try await server.stats()["/f.bin"]
        #expect(stats.statuses == [503, 200], "one refusal, then the file")
        let arrivals = try await server.arrivals(path: "/f.bin")
        try #require(arrivals.count == 2, "\(arrivals)")
        #expect(arrivals[1] - arrivals[0] >= 2, "the retry came \(arrivals[1] - arrivals[0]) s after the 503")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
    }

    @Test func status429OnTheProbeIsRetriedToo() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 10_000, seed: 14)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(status: 429, retryAfter: "1", statusTimes: 2))
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(project.exists("f.bin"))
    }

    @Test func aServerThatKeepsDroppingStillDeliversTheFile() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 3 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 15)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // Every GET is cut after 400 KB: with 1 retry allowed, only progress keeps it going.
        try await server.behave(path: "/f.bin", FaultBehaviour(dropAfter: 400_000))
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 1, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
        let stats = try await server.stats()["/f.bin"]
        #expect(stats.gets >= 8)
        #expect(stats.bytesSent == size, "every byte was fetched once: each retry continued")
    }

    @Test func attemptsWithoutProgressUseUpTheRetries() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 100_000, seed: 21)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(dropAfter: 0))
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 2, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("gave up after 2 retries"), "\(result.stderr)")
        #expect(try await server.stats()["/f.bin"].gets == 3)
        #expect(!project.exists("f.bin"))
    }

    @Test func notFoundFailsAtOnceAndTheOthersStillComplete() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("ok.bin"), size: 10_000, seed: 16)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(server.url("/missing.bin")), to: missing.bin }",
            "{ url: \(server.url("/ok.bin")), to: ok.bin }",
        ])
        let plan = items(try jsonObject(try await project.run(["plan", "--json"]).stdout))
        #expect(plan[0]["action"] as? String == "error")
        #expect(plan[0]["error_code"] as? String == "http", "the plan says what kind of error it was")
        #expect(plan[0]["http_status"] as? Int == 404)
        #expect(plan[1]["error_code"] == nil && plan[1]["http_status"] == nil, "only items that cannot be planned have them")
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 1)
        #expect(project.exists("ok.bin"))
        #expect(!project.exists("missing.bin"))
        let all = items(try jsonObject(result.stdout))
        #expect(all[0]["status"] as? String == "failed")
        #expect((all[0]["error"] as? String)?.contains("404") == true)
        #expect((all[0]["error"] as? String)?.contains(server.url("/missing.bin")) == true)
        #expect(all[1]["status"] as? String == "ok")
        #expect(all[1]["size"] as? Int == 10_000, "apply learnt the size from the GET it made")
        #expect(all[1]["transferred"] as? Int == 10_000)
        #expect(try await server.stats()["/missing.bin"].requests == 2, "a 404 is not retried, by plan or apply")
    }

    @Test func headRefusedFallsBackToARangedGet() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 54_321, seed: 17)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(headStatus: 405))
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["size"] as? Int == 54_321)
        #expect(try await server.stats()["/f.bin"].ranges.contains("bytes=0-0"))
        let apply = try await project.run(["apply"])
        #expect(apply.exitCode == 0, "\(apply.stderr)")
    }

    @Test func unknownLengthIsDownloadedAndPlannedAsUnknown() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 200_000, seed: 18)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // No length, and no ranges either, so the bytes=0-0 fallback cannot learn the size.
        try await server.behave(path: "/f.bin", FaultBehaviour(noLength: true, noAcceptRanges: true))
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["size"] is NSNull)
        #expect(item["bytes"] is NSNull)
        let apply = try await project.run(["apply"])
        #expect(apply.exitCode == 0, "\(apply.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
    }

    @Test func aStalledTransferIsDroppedAndResumed() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 1 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 19)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(stallAfter: 500_000, stallTimes: 1))
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 2, timeout: 2s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
        let stats = try await server.stats()["/f.bin"]
        #expect(stats.ranges.contains("bytes=500000-"), "the retry continued from the stall")
        // syncr's own check of the stream, in the manifest's terms: curl's averaged speed
        // would have said "less than 1.0 KiB/s", seconds later.
        #expect(result.stderr.contains("no data for 2 s (timeout: 2s in the manifest) from \(server.url("/f.bin"))"),
                "\(result.stderr)")
    }

    /// A server that stops sending mid-body fails the entry in the manifest's terms: the
    /// `timeout:` that decided it, the URL, and what the cache keeps. It said curl's
    /// "Operation too slow. Less than 1024 bytes/sec transferred the last 7 seconds", seconds
    /// after the timeout, since curl's limit averages the speed over the last five.
    @Test func aStallMidBodyNamesTheTimeout() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 1 << 20, seed: 23)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        try await makePartial(project, server, path: "/f.bin", bytes: 400_000)
        // The resume's answer begins, and then nothing comes: no progress, so no retry.
        try await server.behave(path: "/f.bin", FaultBehaviour(stallAfter: 0))
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.contains("no data for 5 s (timeout: 5s in the manifest) from \(server.url("/f.bin")); "
                                       + "390.6 KiB kept in the cache, run again to resume"), "\(result.stderr)")
        #expect(!result.stderr.contains("Operation too slow"), "\(result.stderr)")
        let json = try await project.run(["apply", "--json"])
        let item = try #require(items(try jsonObject(json.stdout)).first)
        #expect(item["error_code"] as? String == "timed_out", "scripts see the code they always did: \(json.stdout)")
    }

    /// A stall on a server that names no version of the file (no ETag, no Last-Modified):
    /// the bytes that came cannot be resumed, and the message says the next run starts over,
    /// which the next plan does. It said "kept in the cache, run again to resume".
    @Test func aStallWithoutValidatorsSaysTheNextRunStartsOver() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 1 << 20, seed: 24)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(noValidators: true, stallAfter: 500_000))
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 2s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.contains("cannot be resumed, since the server names no version of the file"), "\(result.stderr)")
        #expect(result.stderr.contains("the next run starts over"), "\(result.stderr)")
        #expect(!result.stderr.contains("run again to resume"), "\(result.stderr)")
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["action"] as? String == "restart", "\(plan.stdout)")
    }

    /// A resume the server answers with the whole file (it ignores Range) restarts from byte
    /// 0, and the summary counts it restarted: it said "1 resumed".
    @Test func aResumeTheServerTurnsIntoAWholeDownloadCountsAsRestarted() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 1 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 25)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        try await makePartial(project, server, path: "/f.bin", bytes: 400_000)
        try await server.behave(path: "/f.bin", FaultBehaviour(ignoreRange: true))
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("ignored the Range request; restarted from byte 0"), "\(result.stderr)")
        #expect(result.stderr.contains("syncr: 1 restarted, 0 up to date"), "\(result.stderr)")
        #expect(!result.stderr.contains("resumed"), "\(result.stderr)")
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
    }

    @Test func aWrongContentRangeOnResumeRestartsCleanly() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 1 << 20
        try makeFile(path: www.appending("f.bin"), size: size, seed: 20)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, timeout: 5s }",
                                  downloads: ["{ url: \(server.url("/f.bin")), to: f.bin }"])
        try await makePartial(project, server, path: "/f.bin", bytes: 400_000)
        try await server.behave(path: "/f.bin", FaultBehaviour(wrongContentRange: true))
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("restarted from byte 0"))
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
    }

    @Test func secretsFromTheEnvironmentNeverShow() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \"\(server.url("/private.bin"))?token=${SYNCR_IT_TOKEN}\", to: p.bin, headers: { Authorization: \"Bearer ${SYNCR_IT_BEARER}\" } }",
        ])
        let env = ["SYNCR_IT_TOKEN": "tok-93jd83hf", "SYNCR_IT_BEARER": "bearer-k2k4j5h6"]
        for args in [["plan"], ["plan", "--json"], ["apply"], ["apply", "--json"]] {
            let r = try await project.run(args, environment: env)
            #expect(r.exitCode == 1)
            for secret in env.values {
                #expect(!r.stdout.contains(secret) && !r.stderr.contains(secret), "\(args) leaked a secret")
            }
            #expect((r.stdout + r.stderr).contains("${SYNCR_IT_TOKEN}"), "the URL is shown as written")
        }
    }
}
