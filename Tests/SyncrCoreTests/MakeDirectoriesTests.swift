#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import SyncrCore

/// `FS.makeDirectories` names what stands where a folder must go.
@Suite(.timeLimit(.minutes(5))) struct MakeDirectoriesTests {
    @Test(arguments: [
        ("file", "a file is in the way"),
        ("dangling", "a symbolic link to nothing is in the way"),
        ("tofile", "a symbolic link to a file is in the way"),
    ])
    func whatIsInTheWayIsNamed(name: String, words: String) throws {
        let tmp = try TemporaryFolder()
        try Data("x".utf8).write(to: URL(fileURLWithPath: tmp.path + "/file"))
        #expect(symlink(tmp.path + "/nothing-here", tmp.path + "/dangling") == 0)
        #expect(symlink(tmp.path + "/file", tmp.path + "/tofile") == 0)
        #expect {
            try FS.makeDirectories(tmp.path + "/" + name + "/sub")
        } throws: { error in
            "\(error)".contains(words) && "\(error)".contains(tmp.path + "/" + name)
        }
    }

    /// Through a link to a folder, the folders are made where it points.
    @Test func aLinkToAFolderIsWrittenThrough() throws {
        let tmp = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: tmp.path + "/real", withIntermediateDirectories: true)
        #expect(symlink(tmp.path + "/real", tmp.path + "/link") == 0)
        try FS.makeDirectories(tmp.path + "/link/a/b")
        #expect(FS.isFolder(tmp.path + "/real/a/b"))
    }
}
