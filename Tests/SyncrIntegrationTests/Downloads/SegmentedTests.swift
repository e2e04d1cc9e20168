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
        let gets = try nginx.accessLog().filter { $0.method == "GET" }
        #expect(gets.count >= 4, "the file came in pieces")
        #expect(gets.allSatisfy { $0.status == 206 && $0.range != nil })
        #expect(gets.filter { $0.range != "bytes=0-" }.allSatisfy { $0.ifRange != nil }, "every piece carries If-Range")
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
        try makeFile(path: www.appending("big.bin"), size: size, seed: 37)
        let before = try nginx.accessLog().count
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let gets = try nginx.accessLog().dropFirst(before).filter { $0.method == "GET" }
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
        let gets = try nginx.accessLog().filter { $0.method == "GET" }
        #expect(gets.count == 1)
        #expect(gets.first?.range == nil || gets.first?.range == "bytes=0-")
    }

    @Test func killedAtRandomMomentsTheRerunCompletesWithoutRefetching() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let size = 32 << 20
        try makeFile(path: www.appending("big.bin"), size: size, seed: 33)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        // 4 connections at 1.5 MB/s each: about 5 s in all, so each kill lands mid-transfer,
        // and a kill loses at most one checkpoint interval of bytes.
        try await server.behave(path: "/big.bin", FaultBehaviour(rate: 1_500_000))
        let project = try Project()
        try project.writeManifest(defaults: "{ connections: 4, min_split: 4MiB, timeout: 10s }",
                                  downloads: ["{ url: \(server.url("/big.bin")), to: big.bin }"])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            let child = try project.start(["apply"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...1200, using: &generator)))
            kill(child.pid, SIGKILL)
            child.process.waitUntilExit()
            if project.exists("big.bin") {
                let got = try await sha256(file: project.file("big.bin"))
                #expect(got == (try await sha256(file: www.appending("big.bin"))),
                        "the destination is absent or complete, never partial")
            }
        }
        try await server.behave(path: "/big.bin", FaultBehaviour())
        let final = try await project.run(["apply"])
        #expect(final.exitCode == 0, "\(final.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        let sent = try await server.stats()["/big.bin"].bytesSent
        #expect(sent < size + size / 2, "sent \(sent) bytes for a \(size)-byte file over 4 runs")
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
        child.process.waitUntilExit()
        try #require(recorded)
        let recordedPieces = try #require(project.cacheStates().first?["ranges"] as? [[Int]]).map { $0[0]..<$0[1] }
        #expect(recordedPieces.count == 4)
        try await server.reset()
        let plan = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(plan.stdout)).first)
        #expect(item["action"] as? String == "resume")
        #expect(item["offset"] as? Int == 1 << 20, "the first missing byte")
        #expect(item["bytes"] as? Int == size - (4 << 20))
        #expect((item["reason"] as? String)?.contains("4 pieces") == true)
        let apply = try await project.run(["apply"])
        #expect(apply.exitCode == 0, "\(apply.stderr)")
        #expect(try await sha256(file: project.file("big.bin")) == (try await sha256(file: www.appending("big.bin"))))
        // Only the gaps are asked for. (A piece handed over to an idle connection ends its
        // first connection early, so bytes already on the wire may be sent twice: allow that.)
        let stats = try await server.stats()["/big.bin"]
        for header in stats.ranges {
            let bounds = header.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
            try #require(bounds.count == 2, "closed ranges only: \(header)")
            #expect(!recordedPieces.contains { $0.overlaps(bounds[0]..<(bounds[1] + 1)) }, "\(header) refetches recorded bytes")
        }
        let missing = size - (4 << 20)
        #expect(stats.bytesSent >= missing && stats.bytesSent < missing + missing / 2)
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
