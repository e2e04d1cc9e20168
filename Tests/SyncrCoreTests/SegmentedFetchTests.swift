import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// The range scheduler (`SegmentedFetch`, and the lead request of `Downloader+Fetch` that it
/// helps) against a scripted server: each test names the server behaviour it scripts.
///
/// Pieces are never cut below `SegmentedFetch.minimumPiece` (1 MiB), so the files are a few MiB.
@Suite(.timeLimit(.minutes(10)))
struct SegmentedFetchTests {
    static let mib = 1 << 20
    static let file = Resource(bytes: Resource.pattern(4 * mib))

    /// A project with a partial download of `file` that segmentation resumes: the first MiB on
    /// disk, the rest missing.
    func resumable(connections: Int = 2, retries: Int = 2) throws -> ScriptedProject {
        let project = try ScriptedProject(retries: retries, connections: connections)
        try project.leavePartial("big.bin", of: Self.file, ranges: [0..<Int64(Self.mib)])
        return project
    }

    /// A 4 MiB file served without an ETag, so only its date (the same for every seed) tells
    /// versions apart.
    static func undated(seed: UInt8 = 0) -> Resource {
        Resource(bytes: Resource.pattern(4 * mib, seed: seed), etag: nil, lastModified: "Tue, 01 Oct 2024 10:00:00 GMT")
    }

    /// The GETs that asked for a bounded range (pieces), as (start, end) inclusive.
    func pieces(_ server: ScriptedTransport) -> [(Int64, Int64)] {
        server.gets.compactMap { r in r.range.flatMap { range in range.end.map { (range.start, $0) } } }
    }

    /// Only a date vouches for the version, and the URL's redirect now leads to another place
    /// that serves another file of the same size and date (a "latest" link moved on between the
    /// plan's HEAD and the pieces): its pieces must not be joined to the cached first MiB. The
    /// file is fetched again on one stream, whole from the new place.
    @Test func piecesFromAnotherPlaceAreNotJoinedWhenOnlyADateVouches() async throws {
        let old = Self.undated()
        let new = Self.undated(seed: 9)
        let project = try ScriptedProject(connections: 2)
        try project.leavePartial("big.bin", of: old, ranges: [0..<Int64(Self.mib)])
        var record = try #require(project.record("big.bin"))
        record.finalURL = "http://mirror.test/a/big.bin"
        try project.cache.saveState(record, key: project.key("big.bin"), durable: false)
        let server = ScriptedTransport { request, _ in
            var reply = request.method == .head ? old.answer(request) : new.answer(request)
            reply.reached = request.method == .head ? "http://mirror.test/a/big.bin" : "http://mirror.test/b/big.bin"
            return reply
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: new.bytes) == nil)
        #expect(result.noteTexts.contains { $0.contains("the URL now leads to another place") }, "\(result.noteTexts)")
    }

    /// The cache's disk fills while pieces arrive: the failure is said as on one stream (what is
    /// kept, free room, run again), not as a bare "cannot write" of the cache file with 0 bytes
    /// received.
    @Test func aFullDiskUnderThePiecesIsANoSpaceFailure() async throws {
        let project = try resumable(retries: 0)
        let server = ScriptedTransport { request, _ in
            if request.method == .head { return Self.file.answer(request) }
            var reply = Self.file.answer(request)
            reply.failure = .local(path: "/cache/x.data", errno: ENOSPC, message: "cannot write: No space left on device")
            return reply
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .failed)
        #expect(result.error?.code == "no_space", "\(result.errorText ?? "")")
        #expect(result.errorText?.contains("1.0 MiB downloaded so far is kept, free some space and run again to resume") == true,
                "\(result.errorText ?? "")")
    }

    /// A server that answers HEAD from one place and GET from another (no ETag): the pieces of a
    /// resume come from where the cached bytes came from (an earlier run's GETs), so they are
    /// kept; the HEAD's place is never held against them.
    @Test func aHeadThatEndsElsewhereThanTheGetsDoesNotStopAResume() async throws {
        let file = Self.undated()
        let project = try ScriptedProject(connections: 2)
        try project.leavePartial("big.bin", of: file, ranges: [0..<Int64(Self.mib)])
        var record = try #require(project.record("big.bin"))
        record.finalURL = "http://mirror.test/get/big.bin"
        try project.cache.saveState(record, key: project.key("big.bin"), durable: false)
        let server = ScriptedTransport { request, _ in
            var reply = file.answer(request)
            reply.reached = request.method == .head ? "http://mirror.test/head/big.bin" : "http://mirror.test/get/big.bin"
            return reply
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: file.bytes) == nil)
        #expect(result.noteTexts.isEmpty && result.transferred == Int64(3 * Self.mib), "\(result.noteTexts)")
    }

    /// A fresh file split out from its lead request, from a redirector that sends the lead to
    /// one file and the pieces to another of the same size and date: the pieces are not joined
    /// to the lead's bytes; the file comes whole over one stream.
    @Test func piecesThatEndElsewhereThanTheLeadAreNotJoinedToIt() async throws {
        let old = Self.undated()
        let new = Self.undated(seed: 9)
        let project = try ScriptedProject(connections: 2, minSplit: 1 << 20)
        let server = ScriptedTransport { request, _ in
            let lead = request.range?.start == 0 && request.range?.end != nil
            var reply = lead ? old.answer(request) : new.answer(request)
            reply.reached = lead ? "http://mirror.test/a/big.bin" : "http://mirror.test/b/big.bin"
            return reply
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: new.bytes) == nil)
        #expect(result.noteTexts.contains { $0.contains("the URL now leads to another place") }, "\(result.noteTexts)")
    }

    @Test func missingBytesArriveInPiecesOverSeveralConnections() async throws {
        let project = try resumable()
        let server = ScriptedTransport(serving: Self.file)
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        // 3 MiB missing over 2 connections: two pieces that meet, each with If-Range.
        let asked = pieces(server).sorted { $0.0 < $1.0 }
        #expect(asked.count == 2 && asked[0].0 == Int64(Self.mib) && asked[1].1 == Int64(4 * Self.mib - 1), "\(asked)")
        #expect(asked.count == 2 && asked[0].1 + 1 == asked[1].0, "\(asked)")
        #expect(server.gets.allSatisfy { $0.ifRange == "\"v1\"" && $0.ownConnection })
        #expect(result.transferred == Int64(3 * Self.mib))
    }

    /// A run stopped while the piece from byte 0 had written nothing and the others had theirs:
    /// the record vouches for bytes 1 MiB to the end (`good` 0). The next run keeps them and
    /// fetches only the first MiB; the file was truncated under that record, and the zeros it
    /// then held were placed as the file.
    @Test func piecesKeptWhileTheFirstHadNothingAreResumedNotZeroed() async throws {
        let project = try ScriptedProject(connections: 2)
        try project.leavePartial("big.bin", of: Self.file, ranges: [Int64(Self.mib)..<Int64(4 * Self.mib)])
        let server = ScriptedTransport(serving: Self.file)
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        #expect(pieces(server).map { $0.0 } == [0] && result.transferred == Int64(Self.mib), "\(pieces(server))")
    }

    @Test func serverIgnoresRangeAndAnswers200WithTheWholeBody() async throws {
        let project = try resumable()
        let server = ScriptedTransport { request, _ in
            request.method == .head ? Self.file.answer(request) : Self.file.whole()
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        #expect(server.gets.last?.range == nil, "the fallback stream asks for the whole file")
        #expect(result.noteTexts.contains { $0.contains("fell back to one stream") }, "\(result.noteTexts)")
    }

    @Test func serverIgnoresRangeOnAFreshFileSoTheLeadStreamTakesItAll() async throws {
        let project = try ScriptedProject(connections: 4)
        let server = ScriptedTransport { request, _ in Self.file.whole() }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        // The lead asked for the first min_split / connections bytes (at least 1 MiB) and got
        // the whole file in a 200, which holds them: it is kept, and there is nothing to share.
        #expect(server.gets.map(\.rangeText) == ["bytes=0-1048575"])
    }

    /// The server does not give the size in its ranged answers (`Content-Range: bytes 0-N/*`,
    /// which RFC 9110 allows): the lead's answer filling all it asked for says nothing of the
    /// rest, which is asked for, against the lead's ETag, on the same stream.
    @Test(arguments: [4 << 20, (1 << 20) + 1])
    func serverGivesNoSizeInContentRangeSoTheRestIsAskedFor(size: Int) async throws {
        let file = Resource(bytes: Resource.pattern(size))
        let project = try ScriptedProject(connections: 4)
        let server = ScriptedTransport { request, _ in Self.withoutSize(file.answer(request)) }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: file.bytes) == nil)
        #expect(server.gets.map(\.rangeText) == ["bytes=0-1048575", "bytes=1048576-"])
        #expect(server.gets.last?.ifRange == "\"v1\"")
    }

    /// `reply` with the size in its `Content-Range` written as `*`.
    static func withoutSize(_ reply: Reply) -> Reply {
        guard let range = reply.headers.first(where: { $0.name == "Content-Range" })?.value,
              let slash = range.lastIndex(of: "/"), !range.contains("*") else { return reply }
        return reply.with("Content-Range", String(range[..<slash]) + "/*")
    }

    @Test func connectionDropsAfterNBytesThen206ResumesThePiece() async throws {
        let project = try resumable(retries: 0)
        let cut = 100_000
        let end = Int64(4 * Self.mib - 1)
        let dropped = Locked(false)
        let server = ScriptedTransport { request, _ in
            let reply = Self.file.answer(request)
            // The piece that ends the file breaks once, 100 000 bytes in.
            guard request.method == .get, request.range?.end == end,
                  dropped.withLock({ done in defer { done = true }; return !done }) else { return reply }
            return reply.dropping(after: cut)
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        let last = pieces(server).filter { $0.1 == Int64(4 * Self.mib - 1) }
        // The retry asks for the rest of that piece only, to the same end.
        #expect(last.count == 2 && last[1].0 == last[0].0 + Int64(cut), "\(last)")
    }

    @Test func etagChangesBetweenProbeAndGet() async throws {
        let project = try resumable()
        let newer = Resource(bytes: Resource.pattern(4 * Self.mib, seed: 7), etag: "\"v2\"")
        let server = StreamFetchTests.changed(from: Self.file, to: newer)
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        // The If-Range of every piece failed (200): no piece of v2 lands beside the MiB of v1.
        #expect(project.difference("big.bin", from: newer.bytes) == nil)
        #expect(project.record("big.bin")?.etag?.headerValue == "\"v2\"")
        #expect(result.noteTexts.contains { $0.contains("fell back to one stream") }, "\(result.noteTexts)")
    }

    @Test func serverIgnoresIfRangeAndAnswers206FromTheNewVersion() async throws {
        let project = try resumable()
        let newer = Resource(bytes: Resource.pattern(4 * Self.mib, seed: 7), etag: "\"v2\"")
        let server = ScriptedTransport { request, _ in
            if request.method == .head { return Self.file.answer(request) }
            var ignoring = request
            ignoring.ifRange = nil
            return newer.answer(ignoring)
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        // No piece of v2 lands beside the first MiB of v1.
        #expect(project.difference("big.bin", from: newer.bytes) == nil)
        #expect(project.record("big.bin")?.etag?.headerValue == "\"v2\"")
        #expect(result.noteTexts.contains { $0.contains("the file changed") && $0.contains("fell back to one stream") },
                "\(result.noteTexts)")
    }

    @Test func status416ForARangePastTheEnd() async throws {
        let project = try resumable()
        // Between HEAD and the pieces the file shrank to 512 KiB, under the same validator: every
        // piece (all past the cached first MiB) is answered 416.
        let shorter = Resource(bytes: Resource.pattern(Self.mib / 2, seed: 3))
        let server = StreamFetchTests.changed(from: Self.file, to: shorter)
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: shorter.bytes) == nil)
        #expect(result.noteTexts.contains { $0.contains("416") && $0.contains("fell back to one stream") }, "\(result.noteTexts)")
    }

    @Test func pieceAnsweredWithADifferentContentRange() async throws {
        let project = try resumable()
        // Every bounded range is answered from one byte further on than asked.
        let server = ScriptedTransport { request, _ in
            guard request.method == .get, let range = request.range, let end = range.end else {
                return Self.file.answer(request)
            }
            return Self.file.part(ByteRange(start: range.start + 1, end: end))
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        #expect(result.noteTexts.contains { $0.contains("a Range answer did not fit") }, "\(result.noteTexts)")
        #expect(server.gets.last?.range == nil)
    }

    @Test(arguments: [401, 403])
    func pieceAnsweredUnauthorizedGivesTheCredentialsHint(code: Int) async throws {
        let project = try resumable()
        let server = ScriptedTransport { request, _ in
            request.method == .head ? Self.file.answer(request) : .status(code)
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .failed)
        #expect(result.errorText?.contains("HTTP \(code)") == true, "\(result.errorText ?? "")")
        // The entry has no credentials: the hint says so, as for a single stream.
        #expect(result.errorText?.contains("(no credentials were sent") == true, "\(result.errorText ?? "")")
    }

    @Test func aConnectionThatFinishesEarlyTakesHalfOfTheSlowestPiece() async throws {
        // 8 MiB: what the slow piece has left must be at least two minimum pieces to be split.
        let large = Resource(bytes: Resource.pattern(8 * Self.mib))
        let project = try ScriptedProject(connections: 2)
        try project.leavePartial("big.bin", of: large, ranges: [0..<Int64(Self.mib)])
        let firstPiece = Int64(Self.mib)
        let holder = Locked<ScriptedTransport?>(nil)
        let lastByte = Int64(8 * Self.mib - 1)
        let server = ScriptedTransport { request, _ in
            var reply = large.answer(request)
            guard request.method == .get, let range = request.range, let end = range.end else { return reply }
            // The scheduler cuts a piece only after watching its pace for a quarter second:
            // the wait must outlast that however fast the machine yields.
            func until(_ condition: @escaping @Sendable ([HTTPRequest]) -> Bool) -> @Sendable () async -> Void {
                { await holder.withLock { $0 }?.wait(turns: 20_000_000, until: condition) }
            }
            if range.start == firstPiece {
                // The first piece is slow: after 64 KiB it waits for another connection to take
                // over part of what it has left.
                reply.pause = .init(after: 64 << 10, until: until { $0.contains { $0.range.map { $0.start > firstPiece && $0.start <= end } ?? false } })
            } else if end == lastByte && range.start > firstPiece + Int64(Self.mib) {
                // The other piece starts only once the first is running, so that there is a
                // running piece to take from when it ends, however the threads are scheduled.
                reply.pause = .init(after: 0, until: until { $0.contains { $0.range?.start == firstPiece } })
            }
            return reply
        }
        holder.withLock { $0 = server }
        // The script reaches the server through `holder`: break that cycle when the test ends,
        // or LeakSanitizer reports the server and everything it logged.
        defer { holder.withLock { $0 = nil } }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: large.bytes) == nil)
        let asked = pieces(server)
        let first = try #require(asked.first { $0.0 == firstPiece })
        // Taken over: the second half of what the first piece had left, to the same end.
        let stolen = asked.filter { $0.0 > first.0 && $0.0 < first.1 }
        #expect(stolen.count == 1 && stolen.first?.1 == first.1, "\(asked)")
    }

    @Test func freshLargeFileTheRestIsSharedOutInWholePieces() async throws {
        let project = try ScriptedProject(connections: 2)
        let holder = Locked<ScriptedTransport?>(nil)
        let server = ScriptedTransport { request, number in
            var reply = Self.file.answer(request)
            guard number == 1 else { return reply }
            // The lead (its first 1 MiB) waits after 64 KiB until another connection has a part.
            reply.pause = .init(after: 64 << 10) {
                await holder.withLock { $0 }?.wait { $0.count > 1 }
            }
            return reply
        }
        holder.withLock { $0 = server }
        // The script reaches the server through `holder`: break that cycle when the test ends,
        // or LeakSanitizer reports the server and everything it logged.
        defer { holder.withLock { $0 = nil } }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("big.bin", from: Self.file.bytes) == nil)
        let gets = server.gets
        #expect(gets.first?.rangeText == "bytes=0-1048575")
        // Shares of size / connections (2 MiB): the helper takes the first whole share after
        // the lead's part, against the lead's ETag; the lead's connection, once its part is
        // done, takes the smaller last one. Nothing is asked for twice.
        #expect(gets.dropFirst().map(\.rangeText) == ["bytes=1048576-3145727", "bytes=3145728-4194303"],
                "\(gets.map(\.rangeText))")
        #expect(gets.dropFirst().allSatisfy { $0.ifRange == "\"v1\"" })
        #expect(result.transferred == Int64(4 * Self.mib))
    }

    /// The lead gets its whole part at once; the other connections' pieces then stall until the
    /// run is cancelled. The entry's task waits for them (its helper is not its child task), so
    /// the cancellation must reach them through the entry: it ends interrupted, the lead's
    /// part kept for the next run.
    @Test func runInterruptedWhileTheLeadIsDoneAndThePiecesStall() async throws {
        let project = try ScriptedProject(connections: 2)
        let stalled = OneShot<Bool>()
        let server = ScriptedTransport { request, number in
            var reply = Self.file.answer(request)
            guard number > 1 else { return reply }
            reply.pause = .init(after: 64 << 10) {
                stalled.fulfil(true)
                // Ends when the piece's task is cancelled; the hour is never waited.
                try? await Task.sleep(for: .seconds(3600))
            }
            return reply
        }
        let session = project.session(project.download("big.bin"), over: server)
        let run = Task { await session.apply().results[0] }
        _ = await stalled.wait()
        // The lead's part may still be on its way when a piece stalls (a loaded host): the
        // cancel comes once it is all written, which is the case this test is about.
        #expect(await server.waitSettled(1), "the lead's part was delivered")
        run.cancel()
        let result = await run.value
        #expect(result.status == .interrupted, "\(result.errorText ?? "")")
        #expect(server.gets.first?.rangeText == "bytes=0-1048575")
        let record = try #require(project.record("big.bin"))
        #expect(record.ranges.covers(Int64(Self.mib)), "the lead's part is kept: \(record.ranges)")
        #expect(project.contents("big.bin") == nil, "an interrupted file is never placed")
    }

    /// The lead stalls after its first bytes; every other connection is answered 403. The
    /// pieces fail, and they stop the lead (which runs on the entry's own task) at once: the
    /// entry fails with the pieces' error and its hint, rather than waiting on the stall.
    @Test func piecesThatFailStopTheStalledLead() async throws {
        let project = try ScriptedProject(connections: 2)
        let server = ScriptedTransport { request, number in
            guard number == 1 else { return .status(403) }
            var reply = Self.file.answer(request)
            // Never ends on its own: only a stop from outside the transfer ends this wait.
            reply.pause = .init(after: 64 << 10) { try? await Task.sleep(for: .seconds(3600)) }
            return reply
        }
        let result = await project.apply(project.download("big.bin"), over: server)
        #expect(result.status == .failed)
        #expect(result.errorText?.contains("HTTP 403") == true, "\(result.errorText ?? "")")
        // The entry has no credentials: the hint says so, as for a single stream.
        #expect(result.errorText?.contains("(no credentials were sent") == true, "\(result.errorText ?? "")")
    }

    /// In memory (tmpfs), the cache file is extended without taking its pages (fallocate would
    /// zero them all before the first request), and a file system without room for it still
    /// stops the entry up front.
    @Test func inMemoryTheFileIsExtendedAfterTheRoomIsChecked() throws {
        let tmp = try TemporaryFolder()
        let path = tmp.path + "/data"
        let fd = open(path, O_RDWR | O_CREAT, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(throws: FileError.self) {
            try SegmentedFetch.preallocate(fd: fd, size: 64 << 20, path: path, inMemoryRoom: 1 << 20)
        }
        try SegmentedFetch.preallocate(fd: fd, size: 64 << 20, path: path, inMemoryRoom: 1 << 30)
        var st = stat()
        try #require(fstat(fd, &st) == 0)
        #expect(st.st_size == 64 << 20)
        #expect(st.st_blocks == 0, "no page taken: \(st.st_blocks) blocks")
        do {
            try SegmentedFetch.preallocate(fd: fd, size: 128 << 20, path: path, inMemoryRoom: 1 << 20)
            Issue.record("64 MiB more do not fit in 1 MiB")
        } catch {
            #expect(error.errno == ENOSPC)
            #expect(error.description.contains("reserve 128"), "\(error.description)")
        }
    }
}
