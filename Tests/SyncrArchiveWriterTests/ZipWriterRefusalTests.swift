import Foundation
import Testing
@testable import SyncrArchive

@Suite(.timeLimit(.minutes(10))) struct ZipWriterRefusalTests {
    // The link sits in tree/sub/, so one `..` stays inside the tree and two leave it.
    @Test(arguments: ["../../outside.txt", "/etc/passwd", "a/../../../x", "../../tree-sibling/file", "/"])
    func linkLeavingTheTreeIsRefusedByName(target: String) throws {
        let scratch = try Scratch("outside")
        try scratch.write("tree/sub/ok.txt", Data("ok".utf8))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/tree/sub/escape", withDestinationPath: target)
        let archive = scratch.path + "/out.zip"
        #expect {
            try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        } throws: { error in
            guard case .unsafePath(let a, let entry, let detail) = error as? ArchiveError else { return false }
            return a == archive && entry == "sub/escape" && detail.contains(target)
                && "\(error)".contains("sub/escape")
        }
        // Nothing was left behind, neither the archive nor its temporary file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["tree"])
    }

    /// An absolute link to a file of the folder itself: refused (a zip holds only relative
    /// links), but said to be absolute, not to point outside, which it does not.
    @Test func anAbsoluteLinkIntoTheTreeIsRefusedAsAbsolute() throws {
        let scratch = try Scratch("absolute")
        try scratch.write("tree/d/f.txt", Data("f".utf8))
        let target = scratch.path + "/tree/d/f.txt"
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/tree/abs", withDestinationPath: target)
        let archive = scratch.path + "/out.zip"
        #expect(throws: ArchiveError.unsafePath(archive: archive, entry: "abs",
                                                detail: "an absolute link (\(target)): only relative links that stay inside "
                                                    + "the folder being zipped are allowed; make it relative, or replace it with the file")) {
            try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        }
    }

    @Test func linkInsideTheTreeThatClimbsAndComesBackIsKept() throws {
        let scratch = try Scratch("inside")
        try scratch.write("tree/a/b/file.txt", Data("x".utf8))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/tree/a/b/back", withDestinationPath: "../../a/b/file.txt")
        let archive = scratch.path + "/out.zip"
        let summary = try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        #expect(summary.symbolicLinks == 1)
    }

    /// What syncr refuses when unpacking it does not write: a link out hidden in a Character
    /// (`../\u{301}x`), a backslash in a name.
    @Test func aLinkOutHiddenInACharacterAndABackslashAreRefused() throws {
        let scratch = try Scratch("hidden")
        try scratch.write("tree/a.txt", Data("a".utf8))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/tree/l", withDestinationPath: "../\u{301}outside")
        #expect(throws: ArchiveError.self) { try ZipWriter.write(directory: scratch.path + "/tree", to: scratch.path + "/out.zip") }
        try FileManager.default.removeItem(atPath: scratch.path + "/tree/l")
        try scratch.write("tree/back\\slash.txt", Data("b".utf8))
        #expect {
            try ZipWriter.write(directory: scratch.path + "/tree", to: scratch.path + "/out.zip")
        } throws: { error in
            "\(error)".contains("back\\slash.txt: a backslash in the name")
        }
        try FileManager.default.removeItem(atPath: scratch.path + "/tree/back\\slash.txt")
        try scratch.write("tree/c:notes.txt", Data("c".utf8))
        #expect {
            try ZipWriter.write(directory: scratch.path + "/tree", to: scratch.path + "/out.zip")
        } throws: { error in
            "\(error)".contains("c:notes.txt: the name starts like a Windows drive")
        }
    }

    @Test func fifoIsRefusedByName() throws {
        let scratch = try Scratch("fifo")
        try scratch.write("tree/a.txt", Data("a".utf8))
        #expect(mkfifo(scratch.path + "/tree/pipe", 0o644) == 0)
        let archive = scratch.path + "/out.zip"
        #expect {
            try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        } throws: { error in
            guard case .unsupported(_, let entry, let detail) = error as? ArchiveError else { return false }
            return entry == "pipe" && detail.contains("fifo")
        }
        #expect(!FileManager.default.fileExists(atPath: archive))
    }

    @Test func aFailedRunKeepsThePreviousArchive() throws {
        let scratch = try Scratch("keep")
        try scratch.write("tree/a.txt", Data("a".utf8))
        let archive = scratch.path + "/out.zip"
        _ = try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        let before = try Data(contentsOf: URL(fileURLWithPath: archive))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/tree/bad", withDestinationPath: "/")
        #expect(throws: ArchiveError.self) { try ZipWriter.write(directory: scratch.path + "/tree", to: archive) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: archive)) == before)
    }

    @Test func missingFolderNamesIt() throws {
        #expect {
            try ZipWriter.write(directory: "/nonexistent/syncr-folder", to: "/tmp/never.zip")
        } throws: { error in
            "\(error)".contains("/nonexistent/syncr-folder")
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct ZipWriterChangedFileTests {
    private func job(size: Int64, length: Int, modified: Int64) -> ZipBlockJob {
        ZipBlockJob(entry: 0, block: 0, offset: 0, length: length, isLast: true, policy: .trial,
                    fileSize: size, modified: modified)
    }

    @Test func aFileThatShrankOrChangedIsRefusedByName() throws {
        let scratch = try Scratch("changed")
        try scratch.write("f.txt", Data(String(repeating: "data ", count: 20).utf8))
        let path = scratch.path + "/f.txt"
        var st = stat()
        #expect(stat(path, &st) == 0)
        let compressor = try ZipBlockCompressor(level: 6)
        let same = try compressor.run(job(size: 100, length: 100, modified: Int64(st.st_mtim.tv_sec)), path: path) { _, trial in trial() }
        #expect(same.length == 100)
        #expect {
            try compressor.run(job(size: 200, length: 200, modified: Int64(st.st_mtim.tv_sec)), path: path) { _, trial in trial() }
        } throws: { "\($0)".contains(path) && "\($0)".contains("shrank") }
        #expect {
            try compressor.run(job(size: 100, length: 100, modified: 12345), path: path) { _, trial in trial() }
        } throws: { "\($0)".contains(path) && "\($0)".contains("changed while") }
    }
}
