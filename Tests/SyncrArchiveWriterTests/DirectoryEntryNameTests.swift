import Foundation
import Testing
@testable import SyncrArchive

/// Found by `scripts/test-sanitizers` (AddressSanitizer, heap-buffer-overflow in
/// ZipSourceScanner.walk): `entry.pointee.d_name` copied a whole `dirent` (256 name bytes) out of
/// readdir's buffer, where the kernel packs entries with only the name bytes each needs, so the
/// copy read past the buffer's end for the last entries. Names are now read in place; under
/// AddressSanitizer this test fails with the old code, and in any build it checks that names of
/// every length come through whole.
@Suite(.timeLimit(.minutes(10))) struct DirectoryEntryNameTests {
    @Test func namesOfEveryLengthAreReadWhole() throws {
        let scratch = try Scratch("dirent")
        let root = scratch.path + "/tree"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // 1...255 bytes: entries of every size, so some short one ends readdir's buffer.
        var names: [String] = []
        for length in 1...255 {
            let name = String(repeating: "n", count: length - 1) + String(length % 10)
            names.append(name)
            #expect(FileManager.default.createFile(atPath: root + "/" + name, contents: nil))
        }
        let scanned = try ZipSourceScanner(archive: "t.zip", skip: []).scan(directory: root)
        #expect(Set(scanned.map { String(decoding: $0.name, as: UTF8.self) }) == Set(names))
    }
}
