import Foundation
import Testing
@testable import SyncrArchive

@Suite(.timeLimit(.minutes(10))) struct ZipWriterZip64Tests {
    @Test(.timeLimit(.minutes(5)))
    func moreThan65535EntriesGetTheZip64EndRecords() async throws {
        let scratch = try Scratch("many")
        let root = scratch.path + "/tree"
        let archive = scratch.path + "/many.zip"
        let folders = 8, perFolder = 8200 // 65,600 files + 8 folders
        // Minutes of file creation, zipping and checking: on a thread of its own.
        let (failedOpens, summary, count, test, pyTest) = try await offThePool {
            var failedOpens = 0
            for f in 0..<folders {
                let folder = root + "/d\(f)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for i in 0..<perFolder {
                    let fd = open(folder + "/\(i)", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                    if fd < 0 { failedOpens += 1; continue }
                    if i % 1000 == 0 { _ = write(fd, "x", 1) }
                    close(fd)
                }
            }
            let summary = try ZipWriter.write(directory: root, to: archive, options: .init(deterministic: true))
            let count = try python("import sys, zipfile; print(len(zipfile.ZipFile(sys.argv[1]).infolist()))", [archive])
            let test = try run("/usr/bin/unzip", ["-tq", archive])
            let pyTest = try run("/usr/bin/env", ["python3", "-m", "zipfile", "-t", archive])
            return (failedOpens, summary, count, test, pyTest)
        }
        #expect(failedOpens == 0)
        let expected = folders * perFolder + folders
        #expect(summary.entries == expected)
        #expect(summary.zip64EndRecords)
        #expect(summary.zip64Entries == 0, "no entry needs a ZIP64 extra field")
        #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(expected), "\(count.stderr)")
        #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
        #expect(test.stdout.contains("No errors detected"))
        #expect(pyTest.status == 0, "\(pyTest.stderr)")

        // The end record says "see ZIP64" in its count fields.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        let end = bytes.suffix(22)
        #expect(end.prefix(4) == Data([0x50, 0x4b, 0x05, 0x06]))
        #expect(end[end.startIndex + 8] == 0xFF && end[end.startIndex + 9] == 0xFF)
        #expect(contains(bytes, signature: 0x0606_4b50) && contains(bytes, signature: 0x0706_4b50))
    }

    @Test(.timeLimit(.minutes(10)))
    func aFileOver4GiBGetsZip64SizesAndNothingElse() async throws {
        let scratch = try Scratch("huge")
        let size: Int64 = (4 << 30) + (1 << 20)
        let path = try scratch.file("tree/huge.bin")
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0) // sparse: reads as zeros, fast
        close(fd)
        try scratch.write("tree/small.txt", Data("small".utf8))
        let archive = scratch.path + "/huge.zip"
        // Deflating 4 GiB and reading it back three times takes minutes: on a thread of its own.
        let (summary, listed, pyTest, test) = try await offThePool {
            (try ZipWriter.write(directory: scratch.path + "/tree", to: archive),
             try python(Scripts.list, [archive]),
             try run("/usr/bin/env", ["python3", "-m", "zipfile", "-t", archive]),
             try run("/usr/bin/unzip", ["-tq", archive]))
        }
        #expect(summary.zip64Entries == 1)
        #expect(!summary.zip64EndRecords, "offsets and counts fit: no ZIP64 end records")
        #expect(summary.deflatedFiles == 1 && summary.storedFiles == 1, "five bytes do not deflate smaller")
        #expect(summary.archiveBytes < 10 << 20)

        let listing = listed.stdout.split(separator: "\n")
        #expect(listing.count == 2)
        let huge = listing[0].split(separator: "\t").map(String.init)
        #expect(huge[0] == "huge.bin" && huge[1] == "8" && huge[2] == String(size))
        // Central directory: the ZIP64 field holds only the uncompressed size (APPNOTE 4.5.3); the
        // extended timestamp follows it.
        var le = size
        let sizeHex = withUnsafeBytes(of: &le) { $0.map { String(format: "%02x", $0) }.joined() }
        var st = stat()
        #expect(stat(path, &st) == 0)
        var mtime = UInt32(truncatingIfNeeded: st.st_mtim.tv_sec)
        let mtimeHex = withUnsafeBytes(of: &mtime) { $0.map { String(format: "%02x", $0) }.joined() }
        #expect(huge[7] == "01000800" + sizeHex + "5554050001" + mtimeHex)
        #expect(listing[1].split(separator: "\t")[7].hasPrefix("5554050001"), "the small file has no ZIP64 field")

        // Local header: version 4.5, sizes 0xFFFFFFFF, both sizes in its ZIP64 field, then the
        // extended timestamp.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: archive))
        let head = [UInt8](try handle.read(upToCount: 30 + 8 + 20 + 9)!)
        try handle.close()
        func u16(_ at: Int) -> UInt64 { UInt64(head[at]) | UInt64(head[at + 1]) << 8 }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(head[at + $1]) << (8 * UInt64($1)) } }
        #expect(u16(4) == 45)
        #expect(head[18..<26].allSatisfy { $0 == 0xFF })
        #expect(u16(26) == 8 && u16(28) == 20 + 9)
        #expect(u16(38) == 1 && u16(40) == 16)
        #expect(u64(42) == UInt64(size))
        #expect(u64(50) == UInt64(huge[3]))
        #expect(Array(head[58..<67]) == [0x55, 0x54, 5, 0, 1] + withUnsafeBytes(of: &mtime) { Array($0) })

        #expect(pyTest.status == 0, "\(pyTest.stdout)\(pyTest.stderr)")
        #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
    }

    @Test func endRecordThresholds() {
        func needs(_ entries: UInt64, _ size: UInt64 = 0, _ offset: UInt64 = 0) -> Bool {
            ZipWriter.EndRecords(entries: entries, centralDirectorySize: size, centralDirectoryOffset: offset).needsZip64
        }
        #expect(!needs(65_534))
        #expect(needs(65_535), "0xFFFF itself means 'see the ZIP64 record'")
        #expect(!needs(1, 0xFFFF_FFFE, 0))
        #expect(needs(1, 0, 0xFFFF_FFFF))
        #expect(needs(1, 0xFFFF_FFFF, 0))
    }

    @Test func centralRecordCarriesOnlyTheFieldsThatOverflow() {
        let record = ZipWriter.ZipEntryRecord(name: Array("x".utf8), method: .deflated, modified: .epoch, crc32: 1,
                                    compressedSize: 10, uncompressedSize: 0x1_0000_0000,
                                    localHeaderOffset: 0x1_2345_6789, mode: 0o100644, isDirectory: false,
                                    localZip64: true)
        #expect(record.centralZip64.uncompressedSize == 0x1_0000_0000)
        #expect(record.centralZip64.compressedSize == nil)
        #expect(record.centralZip64.relativeOffsetOfLocalHeader == 0x1_2345_6789)
        let central = record.centralDirectoryHeader()
        #expect(central.compressedSize == 10 && central.uncompressedSize == .max && central.relativeOffsetOfLocalHeader == .max)
        let bytes = central.serialize()
        #expect(bytes.count == central.totalSize && central.totalSize == 46 + 1 + 4 + 16)
        #expect(Array(bytes[0..<4]) == [0x50, 0x4b, 0x01, 0x02])
        #expect(Array(bytes[4..<8]) == [63, 3, 45, 0], "made by Unix / 6.3, needs 4.5")
        #expect(Array(bytes[38..<42]) == [0, 0, 0xA4, 0x81], "mode 0100644 in the high half")

        #expect(record.localFileHeader().count == 30 + 1 + 20)
    }
}
