import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// The fetch stage over one stream (`Downloader+Fetch`), against a scripted server: each test
/// names the server behaviour it scripts and checks the file that lands and the requests made.
@Suite(.timeLimit(.minutes(10)))
struct StreamFetchTests {
    static let file = Resource(bytes: Resource.pattern(1000))

    /// Answers HEAD as `before` and every GET as `after`: the file changed between them.
    static func changed(from before: Resource, to after: Resource) -> ScriptedTransport {
        ScriptedTransport { request, _ in request.method == .head ? before.answer(request) : after.answer(request) }
    }

    @Test func serverIgnoresRangeAndAnswers200WithTheWholeBody() async throws {
        let project = try ScriptedProject()
        let download = project.download("f.bin")
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        // HEAD says ranges are served; every GET gets the whole file anyway.
        let server = ScriptedTransport { request, _ in
            request.method == .head ? Self.file.answer(request) : Self.file.whole()
        }
        let result = await project.apply(download, over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        // The 200 body starts at byte 0: appended after the 400 cached bytes it would be wrong.
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        #expect(server.gets.map(\.rangeText) == ["bytes=400-", "-"])
        #expect(result.noteTexts.contains { $0.contains("ignored the Range request") }, "\(result.noteTexts)")
    }

    /// A planned resume the server turned into a whole download (200 to the ranged GET) is a
    /// restart in the result: the summary counted it "resumed", from the plan's offset.
    @Test func aResumeAnsweredWithTheWholeFileEndsAsARestart() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        let server = ScriptedTransport { request, _ in
            request.method == .head ? Self.file.answer(request) : Self.file.whole()
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(result.item.action == .restart, "\(result.item)")
        #expect(result.item.offset == 0 && result.item.bytes == Int64(Self.file.size), "\(result.item)")
        #expect(result.transferred == Int64(Self.file.size))
    }

    /// A resume the server answers as asked stays a resume, from its offset.
    @Test func aResumeThatFitsStaysAResume() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        let result = await project.apply(project.download("f.bin"), over: ScriptedTransport(serving: Self.file))
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(result.item.action == .resume && result.item.offset == 400, "\(result.item)")
    }

    /// A stream cut off by a server that names no version of the file (no ETag, no
    /// Last-Modified): its bytes are kept, but the next plan restarts the entry, so the message
    /// says that instead of "run again to resume".
    @Test func keptBytesWithoutAValidatorAreNotPromisedAResume() async throws {
        let project = try ScriptedProject(retries: 0)
        let bare = Resource(bytes: Resource.pattern(4000), etag: nil)
        let server = ScriptedTransport { request, _ in bare.answer(request).dropping(after: 1000) }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .failed)
        let text = result.errorText ?? ""
        #expect(text.contains("cannot be resumed") && text.contains("the next run starts over"), "\(text)")
        #expect(!text.contains("run again to resume"), "\(text)")
    }

    /// A split download's pieces kept with nothing from byte 0 (`good` 0), fetched now on one
    /// stream (`connections: 1`): its GET has no If-Range, and the server changed the file after
    /// the HEAD, then cut the stream off. The record must not vouch for the old pieces under the
    /// new version's ETag: a later split run would trust them and mix the two versions.
    @Test func streamFromByteZeroDropsPiecesKeptOfAnotherVersion() async throws {
        let project = try ScriptedProject(retries: 0)
        let old = Resource(bytes: Resource.pattern(4000))
        let new = Resource(bytes: Resource.pattern(4000, seed: 7), etag: "\"v2\"")
        try project.leavePartial("f.bin", of: old, ranges: [1000..<4000])
        // The resume that follows the cut is answered 404, so the run ends with the record as
        // the cut left it.
        let server = ScriptedTransport { request, _ in
            if request.method == .head { return old.answer(request) }
            return request.range == nil ? new.answer(request).dropping(after: 500) : .status(404)
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .failed, "\(result.errorText ?? "")")
        let record = try #require(project.record("f.bin"))
        #expect(record.etag?.headerValue == "\"v2\"")
        #expect(record.ranges == RangeSet([0..<500]), "\(record.ranges)")
        let cached = try #require(project.cached("f.bin"))
        #expect(ScriptedProject.difference(cached, from: Array(new.bytes[0..<500])) == nil)
    }

    /// A fresh file nobody asked about first, whose bytes fail its checksum: the report still
    /// gives the size the answer told (it said null: only a success filled it in).
    @Test func aChecksumMismatchStillReportsTheSize() async throws {
        let project = try ScriptedProject(retries: 0)
        let server = ScriptedTransport(serving: Self.file)
        let download = project.download("f.bin", checksums: [.sha256(String(repeating: "0", count: 64))])
        let result = await project.apply(download, over: server)
        #expect(result.status == .failed)
        #expect(result.item.size == Int64(Self.file.size) && result.item.bytes == Int64(Self.file.size), "\(result.item)")
    }

    /// What the server said reaches library callers with its final URL masked, as every text:
    /// a token in the query from `${VAR}` was there in full.
    @Test func thePlansRemoteHasItsSecretsMasked() async throws {
        let project = try ScriptedProject()
        var download = project.download("f.bin")
        download.url = Template(written: ScriptedProject.url("f.bin") + "?token=${TOK}",
                                expanded: ScriptedProject.url("f.bin") + "?token=hunter2secret", secrets: ["hunter2secret"])
        let item = await project.plan(download, over: ScriptedTransport(serving: Self.file))
        let reached = try #require(item.remote?.finalURL)
        #expect(!reached.contains("hunter2secret") && reached.hasPrefix(ScriptedProject.url("f.bin")), "\(reached)")
    }

    /// A fresh file answered 404: the entry fails, and leaves no empty cache file behind (each
    /// one was listed by `syncr cache` as an entry of unknown state).
    @Test func status404LeavesNoEmptyCacheFile() async throws {
        let project = try ScriptedProject(retries: 0)
        let server = ScriptedTransport { _, _ in .status(404, body: "gone") }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .failed)
        #expect(project.cached("f.bin") == nil, "no cache file")
        #expect(project.record("f.bin") == nil)
    }

    @Test func connectionDropsAfterNBytesThen206Resumes() async throws {
        // No retries to spare: an attempt that moved the file forward must not use one up.
        let project = try ScriptedProject(retries: 0)
        let server = ScriptedTransport { request, number in
            number == 1 ? Self.file.answer(request).dropping(after: 300) : Self.file.answer(request)
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        #expect(server.gets.map(\.rangeText) == ["-", "bytes=300-"])
        // The resumed bytes must be of the same version as the first 300.
        #expect(server.gets.last?.ifRange == "\"v1\"")
        #expect(result.transferred == 1000)
    }

    @Test(arguments: [1, 0])
    func status503WithRetryAfterThen200(retries: Int) async throws {
        let project = try ScriptedProject(retries: retries)
        let events = EventLog()
        let server = ScriptedTransport { request, number in
            number == 1 ? .status(503, ["Retry-After": "0"], body: "busy") : Self.file.answer(request)
        }
        let result = await project.apply(project.download("f.bin"), over: server, reporter: events)
        if retries == 0 {
            #expect(result.status == .failed)
            #expect(result.errorText?.contains("HTTP 503") == true, "\(result.errorText ?? "")")
            #expect(result.errorText?.contains("not retried: retries is 0") == true, "\(result.errorText ?? "")")
            #expect(server.gets.count == 1)
        } else {
            #expect(result.status == .ok, "\(result.errorText ?? "")")
            #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
            #expect(events.retries.count == 1 && events.retries[0].contains("503"), "\(events.retries)")
            #expect(server.gets.count == 2)
        }
    }

    @Test func etagChangesBetweenProbeAndGet() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        let newer = Resource(bytes: Resource.pattern(1000, seed: 7), etag: "\"v2\"")
        let server = Self.changed(from: Self.file, to: newer)
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        // Not 400 bytes of v1 followed by v2: all of v2, and the record says so.
        #expect(project.difference("f.bin", from: newer.bytes) == nil)
        #expect(project.record("f.bin")?.etag?.headerValue == "\"v2\"")
        #expect(server.gets.first?.ifRange == "\"v1\"")
    }

    @Test func serverIgnoresIfRangeAndAnswers206FromTheNewVersion() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        // A server that honours Range but not If-Range: the rest of v2, labelled v2.
        let newer = Resource(bytes: Resource.pattern(1000, seed: 7), etag: "\"v2\"")
        let server = ScriptedTransport { request, _ in
            if request.method == .head { return Self.file.answer(request) }
            var ignoring = request
            ignoring.ifRange = nil
            return newer.answer(ignoring)
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        // Never 400 bytes of v1 joined to 600 of v2.
        #expect(project.difference("f.bin", from: newer.bytes) == nil)
        #expect(project.record("f.bin")?.etag?.headerValue == "\"v2\"")
        #expect(server.gets.map(\.rangeText) == ["bytes=400-", "-"])
        #expect(result.noteTexts.contains { $0.contains("the file changed") }, "\(result.noteTexts)")
    }

    @Test func status416ForARangePastTheEnd() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<600])
        // Between HEAD and GET the file shrank to 500 bytes, under the same validator.
        let shorter = Resource(bytes: Resource.pattern(500, seed: 3))
        let server = Self.changed(from: Self.file, to: shorter)
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(server.gets.first?.rangeText == "bytes=600-")
        // The 600 cached bytes cannot belong to a 500-byte file: start over in this run.
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: shorter.bytes) == nil)
        #expect(result.noteTexts.contains { $0.contains("416") }, "\(result.noteTexts)")
    }

    @Test func resumeAnsweredWithADifferentContentRange() async throws {
        let project = try ScriptedProject()
        try project.leavePartial("f.bin", of: Self.file, ranges: [0..<400])
        // A 206 for `bytes=400-` that holds the file from byte 0.
        let server = ScriptedTransport { request, _ in
            guard request.method == .get, request.range != nil else { return Self.file.answer(request) }
            return Self.file.part(ByteRange(start: 0))
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        #expect(server.gets.map(\.rangeText) == ["bytes=400-", "-"])
        #expect(result.noteTexts.contains { $0.contains("did not fit the cached bytes") }, "\(result.noteTexts)")
    }

    @Test func serverSendsNoValidatorSoAResumeStartsOver() async throws {
        let project = try ScriptedProject(retries: 1)
        let bare = Resource(bytes: Resource.pattern(1000), etag: nil)
        let server = ScriptedTransport { request, number in
            number == 1 ? bare.answer(request).dropping(after: 300) : bare.answer(request)
        }
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: bare.bytes) == nil)
        // Without a validator the 300 bytes cannot be vouched for against a new version.
        #expect(server.gets.map(\.rangeText) == ["-", "-"])
        #expect(result.noteTexts.contains { $0.contains("no strong ETag or Last-Modified") }, "\(result.noteTexts)")
    }
}
