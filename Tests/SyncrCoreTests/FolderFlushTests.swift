import Foundation
import Testing
@testable import SyncrCore

/// An unpacked tree is flushed before it is swapped in (`FolderReplace.flushTree`): every file
/// and folder in it, and nothing that would block or fail the unpack for no gain.
@Suite(.timeLimit(.minutes(10))) struct FolderFlushTests {
    /// 40 files in nested folders (more than `FlushPool.width`, so that flushes wait for room), a
    /// symbolic link and a FIFO, which opening to flush would block on: the files and the folders
    /// are flushed, the link and the FIFO left to their folder's flush.
    @Test func everyFileAndFolderIsFlushedAndNothingElseOpened() async throws {
        let tmp = try TemporaryFolder()
        let root = tmp.path + "/staging"
        for folder in ["a", "a/b", "c"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for i in 0..<40 {
            let folder = ["", "/a", "/a/b", "/c"][i % 4]
            try Data("file \(i)".utf8).write(to: URL(fileURLWithPath: root + folder + "/f\(i).txt"))
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/a/link", withDestinationPath: "../f0.txt")
        #expect(mkfifo(root + "/c/pipe", 0o644) == 0)
        let flushed = try await FolderReplace.flushTree(root, flusher: FlushPool())
        #expect(flushed == 40 + 4, "40 files and 4 folders (the root among them)")
    }

    /// A folder the archive's modes let no one list, and a file no one may read: left unflushed,
    /// not a failed unpack. (As root every mode can be read, so then they are flushed.)
    @Test func whatCannotBeOpenedIsSkipped() async throws {
        let tmp = try TemporaryFolder()
        let root = tmp.path + "/staging"
        try FileManager.default.createDirectory(atPath: root + "/closed", withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: URL(fileURLWithPath: root + "/closed/inside.txt"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/unreadable.txt"))
        chmod(root + "/unreadable.txt", 0)
        chmod(root + "/closed", 0o311)
        defer { chmod(root + "/closed", 0o755) }
        let flushed = try await FolderReplace.flushTree(root, flusher: FlushPool())
        #expect(flushed == (getuid() == 0 ? 4 : 2))
    }

    /// A tree that is gone (removed by someone else meanwhile) is an error naming it.
    @Test func aMissingTreeIsAnErrorNamingIt() async throws {
        let tmp = try TemporaryFolder()
        let missing = tmp.path + "/gone"
        await #expect(throws: FileError.self) { try await FolderReplace.flushTree(missing, flusher: FlushPool()) }
    }
}
