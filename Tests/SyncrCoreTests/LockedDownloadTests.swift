import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// In a locked run, the answer that brings the bytes is held against the lock, not only the
/// plan's question: the scripted server answers HEAD with the locked version and GET with
/// another of the same size (a file replaced between the two requests, or a CDN whose nodes
/// disagree).
@Suite(.timeLimit(.minutes(5)))
struct LockedDownloadTests {
    private static let locked = Resource(bytes: Resource.pattern(4096), etag: "\"v1\"")
    private static let other = Resource(bytes: Resource.pattern(4096, seed: 7), etag: "\"v2\"")

    private static func run(_ project: ScriptedProject, lock entry: LockedEntry,
                            get: Resource) async -> (ItemResult, ScriptedTransport) {
        let server = ScriptedTransport { request, _ in
            request.method == .head ? Self.locked.answer(request) : get.answer(request)
        }
        let download = project.download("f.bin")
        let options = RunOptions(lock: Lockfile(manifest: "syncr.yml", entries: [entry]), locked: true)
        let session = Session(manifest: project.manifest([download]), options: options, transport: server)
        defer { session.close() }
        return (await session.apply().results[0], server)
    }

    @Test func anotherVersionInTheDownloadsAnswerIsNotPutInPlace() async throws {
        let project = try ScriptedProject()
        let entry = LockedEntry(to: "f.bin", url: ScriptedProject.url("f.bin"), size: 4096, etag: "\"v1\"")
        let (result, _) = await Self.run(project, lock: entry, get: Self.other)
        #expect(result.status == .failed)
        #expect(result.error?.code == "locked_version_changed", "\(result.errorText ?? "")")
        #expect(result.errorText?.contains("ETag \"v1\" → \"v2\" in the answer to the download") == true, "\(result.errorText ?? "")")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/f.bin"), "the destination stays as it was")
        // Nothing of the other version is kept to be resumed from.
        let key = Cache.key(for: project.download("f.bin"))
        #expect(project.cache.loadState(key) == nil)
        #expect(FS.fileSize(project.cache.dataPath(key)) == nil)
    }

    /// A lock with neither SHA-256 nor ETag (a server that sends none) knows a version by its
    /// date: the download's answer must bear the locked one.
    @Test func aLockByDateHoldsTheDownloadsDate() async throws {
        let project = try ScriptedProject()
        var before = Self.locked, after = Self.other
        (before.etag, after.etag) = (nil, nil)
        before.lastModified = "Mon, 02 Nov 2026 10:00:00 GMT"
        after.lastModified = "Fri, 04 Dec 2026 10:00:00 GMT"
        let entry = LockedEntry(to: "f.bin", url: ScriptedProject.url("f.bin"), size: 4096,
                                lastModified: before.lastModified)
        let (head, get) = (before, after)
        let server = ScriptedTransport { request, _ in request.method == .head ? head.answer(request) : get.answer(request) }
        let options = RunOptions(lock: Lockfile(manifest: "syncr.yml", entries: [entry]), locked: true)
        let session = Session(manifest: project.manifest([project.download("f.bin")]), options: options, transport: server)
        defer { session.close() }
        let result = await session.apply().results[0]
        #expect(result.error?.code == "locked_version_changed", "\(result.errorText ?? "")")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/f.bin"))
    }

    @Test func theLockedVersionIsPutInPlace() async throws {
        let project = try ScriptedProject()
        let entry = LockedEntry(to: "f.bin", url: ScriptedProject.url("f.bin"), size: 4096, etag: "\"v1\"")
        let (result, _) = await Self.run(project, lock: entry, get: Self.locked)
        #expect(result.status == .ok, "\(result.errorText ?? "")")
        #expect(FileManager.default.contents(atPath: project.root + "/f.bin") == Data(Self.locked.bytes))
    }
}
