import Testing
@testable import SyncrCore

/// The plan says how an upload folder changed: files edited, added and removed, each as such.
@Suite(.timeLimit(.minutes(5)))
struct SourceChangesTests {
    private static func file(_ sha: String, mtime: Int64 = 1) -> UploadRecord.SentFile {
        UploadRecord.SentFile(size: 1, sha256: sha,
                              fingerprint: FileFingerprint(device: 1, inode: 1, size: 1, mtimeNanoseconds: mtime))
    }

    @Test func editedAddedAndRemovedFilesAreToldApart() {
        let before = ["a": Self.file("1"), "b": Self.file("2"), "c": Self.file("3")]
        let now = ["a": Self.file("1"), "b": Self.file("9"), "d": Self.file("4"), "e": Self.file("5")]
        let changes = UploadPlanner.changedSources(now, before: before, timesMatter: false)
        #expect(changes == SourceChanges(changed: 1, added: 2, removed: 1))
        #expect(changes.reason == "1 file changed, 2 added, 1 removed since the last upload")
    }

    @Test(arguments: [
        (SourceChanges(changed: 1), "1 file changed since the last upload"),
        (SourceChanges(changed: 3), "3 files changed since the last upload"),
        (SourceChanges(removed: 1), "1 file removed since the last upload"),
        (SourceChanges(added: 2, removed: 1), "2 files added, 1 removed since the last upload"),
    ])
    func reasons(changes: SourceChanges, said: String) {
        #expect(changes.reason == said)
    }

    /// A zip that carries times changes with a file's time, not only with its content.
    @Test func timesCountWhereTheyMatter() {
        let before = ["a": Self.file("1", mtime: 1)], now = ["a": Self.file("1", mtime: 2)]
        #expect(UploadPlanner.changedSources(now, before: before, timesMatter: true) == SourceChanges(changed: 1))
        #expect(UploadPlanner.changedSources(now, before: before, timesMatter: false).isEmpty)
    }
}
