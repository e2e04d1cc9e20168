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
        // A name of every byte length from 1 to 255 (the most a Linux name can have), made of
        // two-byte "é" and one or two ASCII digits, so that even and odd lengths both occur.
        for length in 1...255 {
            let digits = length.isMultiple(of: 2) ? 2 : 1
            let tail = String(String(length % 100 + 100).suffix(digits))
            let name = String(repeating: "é", count: (length - digits) / 2) + tail
            try #require(name.utf8.count == length)
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
