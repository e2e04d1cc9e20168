#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrLock
import Testing
@testable import SyncrCore

/// The walks of an upload folder (`UploadTree`) and of a folder to zip (`ZipSourceScanner`)
/// look for a stop request at each name: a signal during the walk of a tree of millions of
/// files ends it there instead of after the whole tree (and the plan after it).
@Suite(.timeLimit(.minutes(5))) struct WalkCancellationTests {
    /// A folder with files in three levels of folders.
    private func tree() throws -> TemporaryFolder {
        let tmp = try TemporaryFolder()
        for folder in ["a", "a/b", "a/b/c"] {
            try FileManager.default.createDirectory(atPath: tmp.path + "/" + folder, withIntermediateDirectories: true)
            for n in 0..<3 { try Data("\(folder) \(n)\n".utf8).write(to: URL(fileURLWithPath: "\(tmp.path)/\(folder)/f\(n)")) }
        }
        return tmp
    }

    /// Served a stop request that is set, the upload folder's walk stops; unset, it lists
    /// every file (so the check does not stop a walk that should go on).
    @Test func anUploadFoldersWalkStopsWhenAsked() throws {
        let tmp = try tree()
        let stop = StopRequest()
        let whole = try Cancellation.serving(stop) { () throws -> UploadTree in try UploadTree.scan(tmp.path) }
        #expect(whole.files.map(\.relative) == ["a/b/c/f0", "a/b/c/f1", "a/b/c/f2", "a/b/f0", "a/b/f1", "a/b/f2",
                                                "a/f0", "a/f1", "a/f2"])
        stop.set()
        #expect {
            try Cancellation.serving(stop) { () throws -> UploadTree in try UploadTree.scan(tmp.path) }
        } throws: { error in
            guard case .interrupted(let folder)? = error as? UploadTree.Problem else { return false }
            return folder == tmp.path
        }
    }

    /// `read` walks a folder off the cooperative pool; a cancelled task's walk ends as
    /// `Interrupted` (which `SyncError.init` makes an interruption), not as a `Problem` (which
    /// the plan would report as an unreadable source).
    @Test func aCancelledTasksFolderReadIsInterrupted() async throws {
        let tmp = try tree()
        let path = tmp.path
        let listed = try await UploadTree.read(path)
        #expect(listed.isDirectory && listed.files.count == 9)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await UploadTree.read(path)
        }
        await #expect(throws: Interrupted.self) { try await task.value }
        // A single file is two `stat`s, read in place: nothing there to stop.
        let file = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await UploadTree.read(path + "/a/f0")
        }
        #expect(try await file.value.files.map(\.relative) == ["f0"])
    }

    /// The scan of a folder to zip stops too: `shape` (what plan compares), and `write`,
    /// which then leaves no archive behind.
    @Test func aZipScanStopsWhenAsked() throws {
        let tmp = try tree()
        let output = tmp.path + "/../" + URL(fileURLWithPath: tmp.path).lastPathComponent + ".zip"
        defer { unlink(output) }
        let stop = StopRequest()
        let shape = try Cancellation.serving(stop) { () throws(ArchiveError) -> [UInt8] in try ZipWriter.shape(of: tmp.path) }
        #expect(String(decoding: shape, as: UTF8.self).split(separator: "\n").count == 12)
        stop.set()
        #expect(throws: ArchiveError.interrupted(path: tmp.path)) {
            try Cancellation.serving(stop) { () throws(ArchiveError) -> [UInt8] in try ZipWriter.shape(of: tmp.path) }
        }
        #expect(throws: ArchiveError.interrupted(path: output)) {
            try Cancellation.serving(stop) { () throws(ArchiveError) -> ZipWriter.Summary in
                try ZipWriter.write(directory: tmp.path, to: output)
            }
        }
        #expect(access(output, F_OK) != 0)
    }
}
