import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// One entry through every stage (decide, reserve, fetch, verify, place: `Downloader.transfer`)
/// and across runs, against a scripted server: each test names the server behaviour it scripts.
@Suite(.timeLimit(.minutes(10)))
struct PipelineTests {
    static let file = Resource(bytes: Resource.pattern(1000))

    @Test func serverAnswers200AndTheFileLandsWithItsRecord() async throws {
        let project = try ScriptedProject()
        let server = ScriptedTransport(serving: Self.file)
        let result = await project.apply(project.download("f.bin"), over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        // Nothing was cached, so nothing was asked first: the GET told size and validators.
        #expect(server.requests.map(\.method) == [.get])
        let record = try #require(project.record("f.bin"))
        #expect(record.complete && record.size == 1000 && record.etag?.headerValue == "\"v1\"")
        #expect(record.destinationFingerprint == FS.fingerprint(project.root + "/f.bin"))
        #expect(project.cached("f.bin") == nil, "the cache file was moved into place, not copied")
    }

    @Test func serverAnswersHEADWithTheSameETagSoTheSecondRunFetchesNothing() async throws {
        let project = try ScriptedProject()
        let download = project.download("f.bin")
        _ = await project.apply(download, over: ScriptedTransport(serving: Self.file))
        let server = ScriptedTransport(serving: Self.file)
        let result = await project.apply(download, over: server)
        #expect(result.status == .skipped, "\(result.errorText ?? "")")
        #expect(server.requests.map(\.method) == [.head])
    }

    /// The place stage renames without looking first, refusing to replace anything; a file that
    /// is there is then replaced and keeps its permissions.
    @Test func serverAnswers200OverAFileSyncrDidNotWriteWhichKeepsItsPermissions() async throws {
        let project = try ScriptedProject()
        let path = project.root + "/f.bin"
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o640) == 0)
        let result = await project.apply(project.download("f.bin"), over: ScriptedTransport(serving: Self.file))
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o640)
    }

    /// A destination in a folder that did not exist when the run began is not looked at (it
    /// cannot exist); one in a folder that exists is, and the reason says what was found.
    @Test func serverAnswers200ForAFileInANewFolderAndOneOverAFileSyncrDidNotWrite() async throws {
        let project = try ScriptedProject()
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: project.root + "/g.bin"))
        let downloads = [project.download("new/deeper/f.bin"), project.download("g.bin", index: 1)]
        let session = Session(manifest: project.manifest(downloads), transport: ScriptedTransport(serving: Self.file))
        defer { session.close() }
        let results = await session.apply().results
        #expect(results.map(\.status) == [.ok, .ok], "\(results.map { $0.errorText ?? "" })")
        #expect(results.map(\.item.reason) == ["nothing cached", "the destination exists but syncr has no record of it"])
        #expect(project.difference("new/deeper/f.bin", from: Self.file.bytes) == nil)
        #expect(project.difference("g.bin", from: Self.file.bytes) == nil)
    }

    /// Another program puts a file into the new folder while the entry downloads (after the
    /// run found the folder missing and so did not look at the destination): the finished file
    /// still replaces it, as it replaces any file found there.
    @Test func serverAnswersWhileSomeoneWritesTheDestinationInANewFolder() async throws {
        let project = try ScriptedProject()
        let download = project.download("new/f.bin")
        let folder = project.root + "/new"
        let server = ScriptedTransport { request, _ in
            mkdir(folder, 0o755)
            _ = FileManager.default.createFile(atPath: download.destination, contents: Data("theirs".utf8))
            return Self.file.answer(request)
        }
        let result = await project.apply(download, over: server)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(result.item.reason == "nothing cached")
        #expect(project.difference("new/f.bin", from: Self.file.bytes) == nil)
        #expect(project.record("new/f.bin")?.destinationFingerprint == FS.fingerprint(download.destination))
    }

    /// A folder made where the file goes while it downloads (after the plan looked) is left
    /// alone, the error says what to do, and the record does not claim the destination.
    @Test func serverAnswersWhileSomeoneMakesAFolderAtTheDestination() async throws {
        let project = try ScriptedProject()
        let download = project.download("f.bin")
        let server = ScriptedTransport { request, _ in
            mkdir(download.destination, 0o755)
            return Self.file.answer(request)
        }
        let result = await project.apply(download, over: server)
        #expect(result.status == .failed)
        #expect(result.errorText?.contains("f.bin: exists and is not a regular file") == true, "\(result.errorText ?? "")")
        #expect(FS.kind(download.destination) == .directory)
        let record = try #require(project.record("f.bin"))
        #expect(record.complete && record.destination == nil, "the verified file stays in the cache")
        #expect(project.cached("f.bin") == Self.file.bytes)
    }

    @Test func serverSendsOtherBytesThanTheManifestPins() async throws {
        let project = try ScriptedProject()
        // The manifest pins the SHA-256 of `file`; the server sends a file of the same size.
        let pinned = try FS.digests(of: try write(Self.file.bytes, in: project), algorithms: ["sha256"])["sha256"]!
        let download = project.download("f.bin", checksums: [.sha256(pinned)])
        let other = Resource(bytes: Resource.pattern(1000, seed: 9))
        let result = await project.apply(download, over: ScriptedTransport(serving: other))
        #expect(result.status == .failed)
        #expect(result.errorText?.contains("sha256 mismatch") == true, "\(result.errorText ?? "")")
        #expect(project.contents("f.bin") == nil, "a file that failed its checksum is never placed")
        #expect(project.record("f.bin") == nil && project.cached("f.bin") == nil, "and not kept")
    }

    @Test func connectionDropsAfterNBytesThenTheServerIsGoneSoTheNextRunResumes() async throws {
        let project = try ScriptedProject(retries: 0)
        let download = project.download("f.bin")
        // First run: 300 bytes, the connection breaks, and the server no longer answers.
        let failing = ScriptedTransport { request, number in
            number == 1 ? Self.file.answer(request).dropping(after: 300) : .refused(request.displayURL)
        }
        let first = await project.apply(download, over: failing)
        #expect(first.status == .failed)
        #expect(first.errorText?.contains("kept in the cache, run again to resume") == true, "\(first.errorText ?? "")")
        // The record vouches for exactly the bytes that arrived, of the version they came from.
        let record = try #require(project.record("f.bin"))
        #expect(record.ranges == RangeSet([0..<300]) && record.etag?.headerValue == "\"v1\"" && !record.complete)
        #expect(project.cached("f.bin") == Array(Self.file.bytes[0..<300]))
        // Second run: asks first (something is cached), then only for the rest.
        let server = ScriptedTransport(serving: Self.file)
        let second = await project.apply(download, over: server)
        #expect(second.status == .ok, "\(second.errorText ?? "")")
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        #expect(server.requests.map { "\($0.method.rawValue) \($0.rangeText)" } == ["HEAD -", "GET bytes=300-"])
        #expect(second.transferred == 700)
    }

    @Test func runInterruptedWhileTheServerIsSendingKeepsWhatArrived() async throws {
        let project = try ScriptedProject()
        let large = Resource(bytes: Resource.pattern(600_000))
        let paused = OneShot<Bool>()
        // The server sends 300 000 bytes, then nothing more until the run is cancelled.
        let server = ScriptedTransport { request, _ in
            var reply = large.answer(request)
            reply.pause = .init(after: 300_000) {
                paused.fulfil(true)
                // Ends at once when the run is cancelled; the hour is never waited.
                try? await Task.sleep(for: .seconds(3600))
            }
            return reply
        }
        let session = project.session(project.download("big.bin"), over: server)
        let run = Task { await session.apply().results[0] }
        _ = await paused.wait()
        run.cancel()
        let result = await run.value
        #expect(result.status == .interrupted)
        #expect(result.errorText?.contains("kept in the cache") == true, "\(result.errorText ?? "")")
        let record = try #require(project.record("big.bin"))
        #expect(record.good == 300_000)
        #expect(ScriptedProject.difference(project.cached("big.bin"), from: Array(large.bytes[0..<300_000])) == nil)
        #expect(project.contents("big.bin") == nil, "an interrupted file is never placed")
    }

    private func write(_ bytes: [UInt8], in project: ScriptedProject) throws -> String {
        let path = project.root + "/expected.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A server that serves no ranges (a 200 without `Accept-Ranges`) sends half a file, and
    /// the run is interrupted: what arrived is kept, but the result does not promise a resume,
    /// which the next plan would not make (it restarts from byte 0). It said "run the same
    /// command again to resume". An entry the interruption kept from starting took no time (its
    /// wait for the one slot was counted).
    @Test func anInterruptionPromisesNoResumeFromAServerWithoutRanges() async throws {
        let project = try ScriptedProject()
        var large = Resource(bytes: Resource.pattern(600_000))
        large.acceptsRanges = false
        let paused = OneShot<Bool>()
        let server = ScriptedTransport { [large] request, _ in
            var reply = large.answer(request)
            reply.pause = .init(after: 300_000) {
                paused.fulfil(true)
                try? await Task.sleep(for: .seconds(3600))
            }
            return reply
        }
        let session = Session(manifest: project.manifest([project.download("big.bin"), project.download("next.bin", index: 1)]),
                              options: RunOptions(jobs: 1), transport: server)
        defer { session.close() }
        let run = Task { await session.apply().results }
        _ = await paused.wait()
        try await Task.sleep(for: .milliseconds(50))
        run.cancel()
        let results = await run.value
        #expect(results[0].outcome == .interrupted(.download(kept: 300_000, size: 600_000, resumes: false)))
        #expect(results[0].errorText?.hasSuffix("or serves no byte ranges: the next run starts over") == true,
                "\(results[0].errorText ?? "")")
        #expect(results[1].outcome == .interrupted(.beforeStart))
        #expect(results[1].seconds == 0)
    }
}
