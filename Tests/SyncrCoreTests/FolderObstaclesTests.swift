#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// `plan` says beforehand what `apply` would find when it makes a destination's folder: a file
/// or a symbolic link that is no folder, at the folder's path or above it.
@Suite(.timeLimit(.minutes(5))) struct FolderObstaclesTests {
    /// A project folder holding each kind of obstacle: `file`, `dangling` (a link to nothing),
    /// `tofile` (a link to a file), and `tofolder` (a link to a folder, no obstacle).
    private static func obstacles() throws -> TemporaryFolder {
        let tmp = try TemporaryFolder()
        try Data("x".utf8).write(to: URL(fileURLWithPath: tmp.path + "/file"))
        try FileManager.default.createDirectory(atPath: tmp.path + "/real", withIntermediateDirectories: true)
        #expect(symlink(tmp.path + "/nothing-here", tmp.path + "/dangling") == 0)
        #expect(symlink(tmp.path + "/file", tmp.path + "/tofile") == 0)
        #expect(symlink(tmp.path + "/real", tmp.path + "/tofolder") == 0)
        return tmp
    }

    /// The look names what `FS.makeDirectories` would fail on, however deep below it the
    /// folder is.
    @Test(arguments: [
        ("file", "a file is in the way"),
        ("dangling", "a symbolic link to nothing is in the way"),
        ("tofile", "a symbolic link to a file is in the way"),
    ])
    func theObstacleIsFoundAboveTheFolder(name: String, words: String) throws {
        let tmp = try Self.obstacles()
        for folder in [name, name + "/sub", name + "/sub/deeper"] {
            #expect(FolderObstacles.look(tmp.path + "/" + folder) == FolderObstacle(path: tmp.path + "/" + name, what: words))
        }
        #expect(throws: FileError.self) { try FS.makeDirectories(tmp.path + "/" + name + "/sub") }
    }

    @Test func foldersThatExistOrCanBeMadeHaveNone() throws {
        let tmp = try Self.obstacles()
        for folder in ["real", "real/new/newer", "tofolder", "tofolder/new", "missing/new"] {
            #expect(FolderObstacles.look(tmp.path + "/" + folder) == nil, "\(folder)")
        }
    }

    /// A project with a file at `out` and a link to nothing at `lib`, and four downloads:
    /// `out/sub/f.bin` and `lib/g.bin` (blocked), `ok/h.bin` (placeable), and an `unzip:` one
    /// into `out/tree` (blocked).
    private static func blockedProject() throws -> (ScriptedProject, [Download]) {
        let project = try ScriptedProject()
        try Data("x".utf8).write(to: URL(fileURLWithPath: project.root + "/out"))
        #expect(symlink(project.root + "/nowhere", project.root + "/lib") == 0)
        var unpacked = project.download("out/tree", index: 3)
        unpacked.unzip = true
        return (project, [project.download("out/sub/f.bin", index: 0), project.download("lib/g.bin", index: 1),
                          project.download("ok/h.bin", index: 2), unpacked])
    }

    /// The plan of an entry whose folder cannot be made fails it, as apply would, naming the
    /// obstacle as in the manifest's folder (it said "apply will fail" and exited 0, so a CI
    /// gate on the plan passed); an entry beside it is planned as usual.
    @Test func thePlanFailsAnEntryApplyCannotPlace() async throws {
        let (project, downloads) = try Self.blockedProject()
        let file = Resource(bytes: Resource.pattern(100))
        let server = ScriptedTransport { request, _ in file.answer(request) }
        let session = Session(manifest: project.manifest(downloads), transport: server)
        defer { session.close() }
        let items = await session.plan().items
        #expect(items.map(\.action) == [.error, .error, .download, .error])
        #expect(items[0].reason == "out/sub/f.bin: its folder cannot be made: out: a file is in the way; move it away and run again",
                "\(items[0].reason)")
        #expect(items[0].error?.code == "destination_blocked")
        #expect(items[1].reason == "lib/g.bin: its folder cannot be made: lib: a symbolic link to nothing is in the way; "
            + "move it away and run again", "\(items[1].reason)")
        #expect(items[2].reason == "nothing cached", "\(items[2].reason)")
        #expect(items[3].reason == "out/tree: its folder cannot be made: out: a file is in the way; move it away and run again",
                "\(items[3].reason)")
    }

    /// `apply` fails an entry whose folder cannot be made before it downloads a byte, as the
    /// plan says (it downloaded the file, then failed as it made the folder): the server is
    /// asked (HEAD), never sent a GET for it. A folder missing when the run began is walked up
    /// too (`wasMissing`), and the entry beside them is downloaded.
    @Test func applyFailsAnEntryItCannotPlaceBeforeDownloading() async throws {
        let (project, downloads) = try Self.blockedProject()
        let file = Resource(bytes: Resource.pattern(100))
        let gets = Locked<[String]>([])
        let server = ScriptedTransport { request, _ in
            if request.method == .get { gets.withLock { $0.append(request.url) } }
            return file.answer(request)
        }
        let session = Session(manifest: project.manifest(downloads), transport: server)
        defer { session.close() }
        let results = await session.apply().results
        #expect(results.map(\.status) == [.failed, .failed, .ok, .failed])
        #expect(results.map { $0.error?.code } == ["destination_blocked", "destination_blocked", nil, "destination_blocked"])
        #expect(results[0].item.reason.contains("out: a file is in the way"), "\(results[0].item.reason)")
        #expect(results[1].item.reason.contains("lib: a symbolic link to nothing is in the way"), "\(results[1].item.reason)")
        #expect(gets.withLock { $0 } == [downloads[2].url.expanded], "only the placeable entry was downloaded")
        #expect(FileManager.default.fileExists(atPath: project.root + "/ok/h.bin"))
    }
}
