import Foundation
import Testing
@testable import SyncrCore

/// The run's listing of `.syncr-` names beside destinations, which decides whether an entry
/// has a killed run's copy or staging folder to remove; and `FS.readAll`, which reads records.
@Suite(.timeLimit(.minutes(10))) struct LeftoverIndexTests {
    @Test func findsOnlySyncrNamesThatExistWhenTheFolderIsFirstListed() throws {
        let folder = try TemporaryFolder()
        let fm = FileManager.default
        try Data("half a copy".utf8).write(to: URL(fileURLWithPath: folder.path + "/.syncr-aaaa.tmp"))
        try fm.createDirectory(atPath: folder.path + "/.syncr-unpack-aaaa/deep", withIntermediateDirectories: true)
        try Data("a".utf8).write(to: URL(fileURLWithPath: folder.path + "/file.bin"))
        try Data("b".utf8).write(to: URL(fileURLWithPath: folder.path + "/.syncr"))
        let index = LeftoverIndex()
        #expect(index.contains(".syncr-aaaa.tmp", in: folder.path))
        #expect(index.contains(".syncr-unpack-aaaa", in: folder.path))
        #expect(!index.contains(".syncr-bbbb.tmp", in: folder.path))
        #expect(!index.contains("file.bin", in: folder.path), "only syncr's temporary names are listed")
        #expect(!index.contains(".syncr", in: folder.path))
        #expect(LeftoverIndex.temporaryNames(in: folder.path) == [".syncr-aaaa.tmp", ".syncr-unpack-aaaa"])
    }

    /// A folder is listed once per run: names that appear later are this run's own, which the
    /// entry that made them looks after.
    @Test func listsAFolderOncePerRun() throws {
        let folder = try TemporaryFolder()
        let index = LeftoverIndex()
        #expect(!index.contains(".syncr-cccc.tmp", in: folder.path))
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.path + "/.syncr-cccc.tmp"))
        #expect(!index.contains(".syncr-cccc.tmp", in: folder.path))
        #expect(LeftoverIndex().contains(".syncr-cccc.tmp", in: folder.path), "a new run lists it again")
    }

    @Test func aMissingFolderHasNoLeftovers() throws {
        let folder = try TemporaryFolder()
        #expect(!LeftoverIndex().contains(".syncr-dddd.tmp", in: folder.path + "/not/there"))
    }

    /// Only a folder that did not exist spares its entries a look at their destinations: one
    /// that exists, or that cannot be read for another reason, does not.
    @Test func aFolderIsMissingOnlyWhenItDidNotExistWhenFirstListed() throws {
        let folder = try TemporaryFolder()
        try Data("a file where a folder would be".utf8).write(to: URL(fileURLWithPath: folder.path + "/file"))
        let index = LeftoverIndex()
        #expect(index.wasMissing(folder.path + "/not/there"))
        #expect(!index.wasMissing(folder.path))
        #expect(!index.wasMissing(folder.path + "/file"), "ENOTDIR is not a missing folder")
        try FileManager.default.createDirectory(atPath: folder.path + "/not/there", withIntermediateDirectories: true)
        #expect(index.wasMissing(folder.path + "/not/there"), "the run's first listing counts")
        #expect(!LeftoverIndex().wasMissing(folder.path + "/not/there"))
    }

    /// Two spellings of one accented name are two folders on Linux, though Swift's `String`
    /// takes them for one: each is listed for itself.
    @Test func foldersAreToldApartByTheirBytes() throws {
        let folder = try TemporaryFolder()
        let composed = folder.path + "/caf\u{e9}", decomposed = folder.path + "/caf\u{65}\u{301}"
        #expect(composed == decomposed)
        try FileManager.default.createDirectory(atPath: composed, withIntermediateDirectories: true)
        let index = LeftoverIndex()
        #expect(index.wasMissing(decomposed))
        #expect(!index.wasMissing(composed))
    }

    /// The point of `wasMissing`: an entry whose folder was missing when the run listed it does
    /// not look at its destination (here a file made since, which the look would have found).
    @Test func aDestinationInAFolderListedMissingIsNotLookedAt() throws {
        let project = try ScriptedProject()
        let download = project.download("new/f.bin")
        let session = project.session(download, over: ScriptedTransport(serving: Resource(bytes: [1])))
        defer { session.close() }
        let leftovers = LeftoverIndex()
        #expect(leftovers.wasMissing(project.root + "/new"))
        try FileManager.default.createDirectory(atPath: project.root + "/new", withIntermediateDirectories: true)
        try Data("made since".utf8).write(to: URL(fileURLWithPath: download.destination))
        #expect(session.localFacts(download, index: nil, leftovers: leftovers).destination == nil)
        #expect(session.localFacts(download, index: nil).destination != nil, "without the listing it looks")
    }

    /// The byte version gives what Foundation gives, for every shape of path Foundation
    /// survives.
    @Test(arguments: ["/a/b/c.bin", "/a", "/a/./b", "/ü/ñ.bin", "/a/../b", "/a b/.c d", "ab", "./c", "a/b",
                      "/", "", "x/y/", "a//b", "/a/", "//a", "/c/", "a/c", "a/b//"])
    func parentFolderIsFoundationsAnswer(path: String) {
        #expect(FS.parentFolder(path) == (path as NSString).deletingLastPathComponent)
    }

    /// Where Foundation traps (a one-letter relative name), the answer is the current folder's
    /// (""), as for a longer name.
    @Test(arguments: ["c", "c/", "c//"])
    func parentFolderOfOneLetterNames(path: String) {
        #expect(FS.parentFolder(path) == "")
    }

    @Test(arguments: [0, 1, 300, 64 * 1024 + 5])
    func readAllReadsWholeFiles(size: Int) throws {
        let folder = try TemporaryFolder()
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/f"))
        #expect(FS.readAll(folder.path + "/f") == bytes)
        #expect(FS.readAll(folder.path + "/missing") == nil)
    }
}
