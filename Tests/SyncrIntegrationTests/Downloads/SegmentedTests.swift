#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Large files over several Range requests at once.
@Suite("segmented downloads", .timeLimit(.minutes(5)))
struct SegmentedTests {
    @Test func aSegmentedDownloadIsByteIdentical() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 40 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 31)
        // Throttled per connection (as CDNs do), so splitting pays and is seen to happen.
        let nginx = try await Nginx.start(root: www.url, options: .init(slowRate: 8_000_000))
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 16MiB }",
                                  downloads: ["{ url: \(nginx.url("/slow/big.bin")), to: big.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let gets = try await nginx.settledAccessLog().filter { $0.method == "GET" }
        #expect(gets.count >= 4, "the file came in pieces")
        #expect(gets.allSatisfy { $0.status == 206 && $0.range != nil })
        // All but the lead request (the first bytes of a file of unknown size) carry If-Range.
        let pieces = gets.filter { $0.range?.hasPrefix("bytes=0-") != true }
        #expect(!pieces.isEmpty && pieces.allSatisfy { $0.ifRange != nil }, "every piece carries If-Range")
        #expect(gets.reduce(0) { $0 + $1.bodyBytesSent } >= size)
    }

    @Test func aPlannedSegmentedDownloadSplitsFromTheStart() async throws {
        // With a cached record the entry is asked about first (HEAD), and split before any GET.
        let www = try TemporaryDirectory(prefix: "www")
        let size = 20 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 36)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 16MiB }",
                                  downloads: ["{ url: \(nginx.url("/big.bin")), to: big.bin }"])
        #expect(try await project.run(["apply"]).exitCode == 0)
        // A new version of the same size: the record no longer matches, the plan says download.
        // (nginx's validators are the size and the second of the mtime: a version written in the
        // same second as the first would look the same, so it is dated apart.)
        try makeFile(path: www.appending("big.bin"), size: size, seed: 37)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)],
                                              ofItemAtPath: www.appending("big.bin").path)
        let before = try await nginx.settledAccessLog().count
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let gets = try await nginx.settledAccessLog().dropFirst(before).filter { $0.method == "GET" }
        #expect(gets.count >= 4)
        #expect(gets.allSatisfy { $0.status == 206 && $0.ifRange != nil })
    }

    @Test func belowMinSplitOneStreamIsUsed() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("f.bin"), size: 3 << 20, seed: 32)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 8, min_split: 16MiB }",
                                  downloads: ["{ url: \(nginx.url("/f.bin")), to: f.bin }"])
        #expect(try await project.run(["apply"]).exitCode == 0)
        #expect(try await sha256(file: project.file("f.bin")) == (try await sha256(file: www.appending("f.bin"))))
        // The lead asks for one connection's share of a split file (16 MiB / 8); the rest
        // follows on the same connection, against the lead's validator, and nothing is sent twice.
        let gets = try await nginx.settledAccessLog().filter { $0.method == "GET" }
        #expect(gets.map(\.range) == ["bytes=0-2097151", "bytes=2097152-"])
        #expect(Set(gets.map(\.connection)).count == 1, "one connection")
        #expect(gets.last?.ifRange != nil)
        #expect(gets.reduce(0) { $0 + $1.bodyBytesSent } == 3 << 20)
    }

    /// A fresh file nobody asked about starts with a bounded lead request; once its answer shows
    /// a file of at least `min_split`, the rest is asked for at once in whole shares of
    /// size / connections (the last, smaller one for the lead's connection), each to its end, so
    /// that no request need be cut short and the server sends the file once. (Whether one is cut
    /// anyway depends on how loaded the machine is, so only the requests are checked.)
    @Test func aFreshSplitDownloadCostsTheServerTheFileOnce() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 24 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 41)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 16MiB }",
                                  downloads: ["{ url: \(nginx.url("/big.bin")), to: big.bin }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let gets = try await nginx.settledAccessLog().filter { $0.method == "GET" }
        // nginx logs a request when it ends, so the lead is found by its range, not by being
        // logged first (a share may end before it on a loaded machine).
        #expect(gets.filter { $0.range?.hasPrefix("bytes=0-") == true }.map(\.range) == ["bytes=0-4194303"],
                "the lead, the one request from byte 0, asks for 16 MiB / 4 connections: \(gets.map(\.range))")
        // 24 MiB / 4 = 6 MiB shares after the lead's 4 MiB, the last one what is left.
        let shares = ["bytes=4194304-10485759", "bytes=10485760-16777215", "bytes=16777216-23068671",
                      "bytes=23068672-25165823"]
        #expect(shares.allSatisfy { share in gets.contains { $0.range == share } }, "\(gets.map(\.range))")
        #expect(!gets.contains { $0.range?.hasSuffix("-") == true }, "no request is open-ended")
    }

    /// Three runs are killed mid-transfer, each once the cache records more than the run
    /// before it left (and a random moment later), so every kill lands between checkpoints of
    /// a resumed transfer. No run asks again for a byte the record held when it started, and in
    /// all the server sends the file once plus at most what a kill can lose: what the
    /// connections received since the last checkpoint.
    @Test func killedAtRandomMomentsTheRerunCompletesWithoutRefetching() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 32 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 33)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // 4 connections at 1.5 MB/s each: about 6 s in all, and one checkpoint interval
        // (500 ms) carries at most 4 x 750 kB.
        let connections = 4, rate = 1_500_000, kills = 3
        try await server.behave(path: "/big.bin", FaultBehaviour(rate: rate))
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: \(connections), min_split: 4MiB, timeout: 10s }",
                                  downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        var recorded: [Range<Int>] = []
        var rangesSeen = 0
        for run in 1...kills {
            // 6, 12, 18 MiB: reachable only by adding to what the runs before recorded.
            let target = run * (6 << 20)
            let extra = UInt32.random(in: 0..<500_000)
            let child = try project.start(["apply"])
            let progressed = await pollOnItsOwnThread(timeout: .seconds(60)) {
                guard project.keptBytes() >= target else { return false }
                usleep(extra)
                kill(child.pid, SIGKILL)
                return true
            }
            kill(child.pid, SIGKILL)
            await child.ended()
            try #require(progressed, "run \(run) should record \(target) bytes before it is killed")
            #expect(!project.exists("big.bin"), "the destination is absent until the file is complete")
            let stats = try await server.stats()["/big.bin"]
            Self.expectNoRefetch(stats.ranges.dropFirst(rangesSeen), of: recorded, run: run)
            rangesSeen = stats.ranges.count
            recorded = Self.recordedRanges(project)
        }
        try await server.behave(path: "/big.bin", FaultBehaviour())
        let final = try await project.run(["apply"])
        #expect(final.exitCode == 0, "\(final.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let stats = try await server.stats()["/big.bin"]
        Self.expectNoRefetch(stats.ranges.dropFirst(rangesSeen), of: recorded, run: kills + 1)
        // What a kill can lose: what every connection received since the last checkpoint, one
        // 500 ms interval of it, doubled for the flush and the scheduling around it. And per
        // piece handed over to an idle connection, what the server had already written of the
        // end of the piece the first connection gives up (a 75 kB write, and what the socket
        // holds: 128 KiB is ample).
        let checkpointBytes = connections * rate / 2
        let perKill = 2 * checkpointBytes
        let sent = stats.bytesSent
        #expect(sent - size <= kills * perKill + stats.ranges.count * (128 << 10),
                "sent \(sent) bytes for a \(size)-byte file over \(kills + 1) runs")
    }

    /// The byte ranges the only cache record holds, from `[[start, end]]`.
    static func recordedRanges(_ project: Project) -> [Range<Int>] {
        let pairs = project.cacheStates().first?["ranges"] as? [[Int]] ?? []
        return pairs.filter { $0.count == 2 }.map { $0[0]..<$0[1] }
    }

    /// Every `Range` header of one run asks only for bytes outside `recorded` (what the record
    /// held when the run started); an open-ended one counts as reaching the end.
    static func expectNoRefetch(_ headers: ArraySlice<String>, of recorded: [Range<Int>], run: Int,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        if !recorded.isEmpty {
            #expect(!headers.isEmpty, "run \(run) resumed with Range requests", sourceLocation: sourceLocation)
        }
        for header in headers {
            let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int(bounds[0]) else {
                Issue.record("run \(run): a Range header syncr should not send: \(header)", sourceLocation: sourceLocation)
                continue
            }
            let asked = first..<(Int(bounds[1]).map { $0 + 1 } ?? Int.max)
            #expect(!recorded.contains { $0.overlaps(asked) },
                    "run \(run): \(header) refetches recorded bytes \(recorded)", sourceLocation: sourceLocation)
        }
    }

    @Test func aSegmentedPartialIsPlannedAsAResumeOfWhatIsMissing() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 16 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 34)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // Every connection stalls after 1 MiB; once the record holds four such pieces, kill.
        // (`bytes=0-` first, then three connections share out the rest.)
        try await server.behave(path: "/big.bin", FaultBehaviour(stallAfter: 1 << 20))
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 4MiB, timeout: 30s }",
                                  downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        let child = try project.start(["apply"])
        let recorded = await poll(timeout: .seconds(30)) {
            let state = project.cacheStates().first
            return (state?["ranges"] as? [[Int]])?.reduce(0) { $0 + $1[1] - $1[0] } == 4 << 20
        }
        kill(child.pid, SIGKILL)
        await child.ended()
        try #require(recorded)
        let recordedPieces = Self.recordedRanges(project).sorted { $0.lowerBound < $1.lowerBound }
        // Four stalled MiB, in three or four ranges: the lead's connection goes on with the share
        // right after its own part, and whether that share's first MiB is recorded before the
        // other connections' depends on how the threads were scheduled.
        #expect((3...4).contains(recordedPieces.count), "\(recordedPieces)")
        let firstMissing = recordedPieces.first.map { $0.lowerBound == 0 ? $0.upperBound : 0 } ?? 0
        // Throttled (about 1 s in all), so that a piece handed over to an idle connection has
        // little of its end already on the wire.
        try await server.reset()
        try await server.behave(path: "/big.bin", FaultBehaviour(rate: 4_000_000))
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["action"] as? String == "resume")
        #expect(item["offset"] as? Int == firstMissing, "the first missing byte")
        #expect(item["bytes"] as? Int == size - (4 << 20))
        #expect((item["reason"] as? String)?.contains("\(recordedPieces.count) pieces") == true, "\(item)")
        let apply = try await project.run(["apply"])
        #expect(apply.exitCode == 0, "\(apply.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        // Only the gaps are asked for, every GET with a Range (a GET without one would fetch
        // the whole file again).
        let stats = try await server.stats()["/big.bin"]
        #expect(stats.gets > 0 && stats.ranges.count == stats.gets, "\(stats.gets) GETs, Range headers: \(stats.ranges)")
        Self.expectNoRefetch(stats.ranges[...], of: recordedPieces, run: 2)
        // A piece handed over to an idle connection ends its first connection early, so bytes
        // already on the wire may be sent twice: allow that, but far less than the recorded
        // 4 MiB a refetch would send again.
        let missing = size - (4 << 20)
        #expect(stats.bytesSent >= missing && stats.bytesSent < missing + (2 << 20), "sent \(stats.bytesSent) bytes for \(missing) missing")
    }

    @Test func aServerThatIgnoresRangesStillYieldsTheRightFile() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 12 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 35)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/big.bin", FaultBehaviour(ignoreRange: true))
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 4MiB }",
                                  downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        #expect(try await server.stats()["/big.bin"].gets == 1, "the 200 to bytes=0- was simply taken whole")
    }

    @Test func aServerThatIgnoresRangesAfterSayingItTakesThemFallsBack() async throws {
        // A cached record makes apply ask first; HEAD says Accept-Ranges, the GETs ignore it.
        let www = try TemporaryDirectory(prefix: "www")
        let size = 12 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 38)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 4MiB }",
                                  downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        #expect(try await project.run(["apply"]).exitCode == 0)
        try makeFile(path: www.appending("new.bin"), size: size, seed: 39)
        try await server.put(path: "/big.bin", from: www.appending("new.bin"))
        try await server.behave(path: "/big.bin", FaultBehaviour(ignoreRange: true))
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("new.bin"))))
        let item = try #require(items(try jsonObject(result.stdout)).first)
        #expect((item["notes"] as? [String])?.contains { $0.contains("fell back to one stream") } == true)
    }

    @Test func thePerHostConnectionCapHolds() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        var downloads: [String] = []
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // Six throttled files, six jobs, a cap of three connections. (Files are not split here:
        // a split ends a connection early, and the server notices such a close only at its next
        // write, so its count would lag behind the client's.)
        for i in 0..<6 {
            try makeFile(path: www.appending("f\(i).bin"), size: 4 << 20, seed: UInt64(40 + i))
            try await server.behave(path: "/f\(i).bin", FaultBehaviour(rate: 8_000_000))
            downloads.append("{ url: \(server.url("/f\(i).bin")), to: f\(i).bin }")
        }
        let project = try Project()
        try project.writeManifest(defaults: "{ jobs: 6, connections: 8, min_split: 64MiB, max_connections_per_host: 3 }",
                                  downloads: downloads)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for i in 0..<6 {
            #expect(try await sha256(file: project.file("f\(i).bin")) == (try await sha256(file: www.appending("f\(i).bin"))))
        }
        let stats = try await server.stats()
        #expect(stats.maxConcurrentConnections <= 3, "saw \(stats.maxConcurrentConnections) connections at once")
        #expect(stats.maxConcurrentConnections >= 2, "the files did run in parallel")
    }
}
