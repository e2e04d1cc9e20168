import Foundation
import Testing
@testable import SyncrCore

/// `directoryEntryName` reads a readdir entry's name in place (see DirectoryEntry.swift); the
/// old `entry.pointee.d_name` copy read past readdir's buffer (AddressSanitizer, found by
/// scripts/test-sanitizers in UploadTree, FolderReplace and CacheInventory).
@Suite(.timeLimit(.minutes(10))) struct DirectoryEntryTests {
    @Test func namesOfEveryLengthAreReadWhole() throws {
        let root = NSTemporaryDirectory() + "syncr-dirent-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var expected: Set<String> = [".", ".."]
        for length in 1...255 {
            let name = String(repeating: "é", count: (length - 1) / 2) + String(length % 10)
            expected.insert(name)
            #expect(FileManager.default.createFile(atPath: root + "/" + name, contents: nil))
        }
        let dir = try #require(opendir(root))
        defer { closedir(dir) }
        var seen: Set<String> = []
        while let entry = readdir(dir) { seen.insert(directoryEntryName(entry)) }
        #expect(seen == expected)
    }
}
