import Foundation
import Testing
@testable import SyncrArchive

/// The tree most tests zip: nested folders, an empty folder, an executable, a link inside the
/// tree, UTF-8 names, an empty file, a large compressible file (many blocks), random data
/// (stored by the trial, several blocks and one), and a `.png` (stored by its extension).
func makeSampleTree(_ scratch: Scratch) throws -> String {
    let root = scratch.path + "/tree"
    try FileManager.default.createDirectory(atPath: root + "/empty-folder", withIntermediateDirectories: true)
    try scratch.write("tree/nested/a/b/c.txt", Data("hello, nested\n".utf8))
    try scratch.write("tree/nested/a/sibling.txt", Data(String(repeating: "sibling ", count: 1000).utf8))
    try scratch.write("tree/bin/run.sh", Data("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
    try scratch.write("tree/é/ü.txt", Data("unicode name\n".utf8))
    try scratch.write("tree/empty.txt", Data())
    try scratch.write("tree/big.txt", compressibleData(megabytes: 20))
    try scratch.write("tree/random.bin", randomData(bytes: 5 << 20))
    try scratch.write("tree/small-random.bin", randomData(bytes: 100_000, seed: 7))
    try scratch.write("tree/image.png", Data(String(repeating: "not really a png ", count: 5000).utf8))
    try FileManager.default.createSymbolicLink(atPath: root + "/link-to-c", withDestinationPath: "nested/a/b/c.txt")
    try FileManager.default.createSymbolicLink(atPath: root + "/nested/a/up-link", withDestinationPath: "../../big.txt")
    return root
}

@Suite(.timeLimit(.minutes(10))) struct ZipWriterRoundTripTests {
    @Test func infoZipAndPythonAgreeWithTheSourceTree() throws {
        let scratch = try Scratch("roundtrip")
        let root = try makeSampleTree(scratch)
        let archive = scratch.path + "/out.zip"
        let summary = try ZipWriter.write(directory: root, to: archive, options: .init(threads: 2))

        let test = try run("/usr/bin/unzip", ["-t", archive])
        #expect(test.status == 0, "unzip -t: \(test.stdout)\(test.stderr)")
        let pyTest = try run("/usr/bin/env", ["python3", "-m", "zipfile", "-t", archive])
        #expect(pyTest.status == 0, "python zipfile -t: \(pyTest.stdout)\(pyTest.stderr)")

        let byUnzip = scratch.path + "/unzip", byPython = scratch.path + "/python"
        let unpack = try run("/usr/bin/unzip", ["-q", archive, "-d", byUnzip])
        #expect(unpack.status == 0, "\(unpack.stderr)")
        try FileManager.default.createDirectory(atPath: byPython, withIntermediateDirectories: true)
        let extract = try python(Scripts.extract, [archive, byPython])
        #expect(extract.status == 0, "\(extract.stderr)")

        let source = try python(Scripts.manifest, [root]).stdout
        #expect(source.contains("dir  empty-folder"))
        #expect(source.contains("link link-to-c -> nested/a/b/c.txt"))
        #expect(source.contains("file bin/run.sh x=True"))
        #expect(try python(Scripts.manifest, [byUnzip]).stdout == source)
        #expect(try python(Scripts.manifest, [byPython]).stdout == source)

        // Stored versus deflated, per entry.
        let listing = try python(Scripts.list, [archive]).stdout
        var methods: [String: Int] = [:]
        var flags: Set<Int> = []
        var systems: Set<Int> = []
        var names: [String] = []
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            names.append(fields[0])
            methods[fields[0]] = Int(fields[1])
            systems.insert(Int(fields[5])!)
            flags.insert(Int(fields[6])!)
            // The extended timestamp (ID 0x5455 and length 5, little-endian; flags 0x01, then the time)
            // and nothing else.
            #expect(fields[7].hasPrefix("5554050001") && fields[7].count == 18, "no other extra field in a small archive: \(line)")
        }
        #expect(methods["big.txt"] == 8)
        #expect(methods["nested/a/sibling.txt"] == 8)
        #expect(methods["random.bin"] == 0, "random data is stored after the trial")
        #expect(methods["small-random.bin"] == 0, "a one-block file decides on all its data")
        #expect(methods["image.png"] == 0, "stored by extension")
        #expect(methods["empty.txt"] == 0)
        #expect(systems == [3], "made by Unix")
        #expect(flags == [0x800], "UTF-8 names, no data descriptors")
        #expect(names == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(names.contains("empty-folder/") && names.contains("é/") && names.contains("é/ü.txt"))
        #expect(!names.contains { $0.hasPrefix("tree") || $0.hasPrefix("/") })

        #expect(summary.files == 9 && summary.symbolicLinks == 2)
        #expect(summary.entries == names.count)
        #expect(!summary.zip64EndRecords && summary.zip64Entries == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        #expect(UInt64(bytes.count) == summary.archiveBytes)
        #expect(!contains(bytes, signature: 0x0606_4b50), "no ZIP64 end record in a small archive")
        #expect(!contains(bytes, signature: 0x0807_4b50), "no data descriptors")
        // Only the archive is left: the temporary file was renamed into place.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    @Test func levelZeroStoresEverything() throws {
        let scratch = try Scratch("level0")
        try scratch.write("tree/a.txt", compressibleData(megabytes: 3))
        let archive = scratch.path + "/out.zip"
        let summary = try ZipWriter.write(directory: scratch.path + "/tree", to: archive, options: .init(level: 0))
        #expect(summary.storedFiles == 1 && summary.deflatedFiles == 0)
        #expect(try run("/usr/bin/unzip", ["-tq", archive]).status == 0)
    }

    @Test func anExistingArchiveInsideTheTreeIsNotZippedIntoItself() throws {
        let scratch = try Scratch("self")
        try scratch.write("tree/a.txt", Data("a".utf8))
        let archive = scratch.path + "/tree/out.zip"
        _ = try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        let again = try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        #expect(again.entries == 1)
        let listing = try python(Scripts.list, [archive]).stdout
        #expect(listing.hasPrefix("a.txt\t"))
    }
}

@Suite(.timeLimit(.minutes(10))) struct ZipWriterOutputTests {
    /// Regression: a block that compresses to between half a buffer and a whole one is written
    /// straight to the file, and must come after what was still buffered (a small file and the
    /// local header before it), not over it.
    @Test func largeCompressedBlocksAfterBufferedBytesLandInOrder() throws {
        let scratch = try Scratch("order")
        try scratch.write("tree/a-small.txt", Data("small but first".utf8))
        // Hex digits of random bytes: about 55% of their size once deflated, so a 1 MiB block
        // gives a piece of roughly 560 KiB.
        let hex = Data(randomData(bytes: 3 << 19).map { b -> [UInt8] in
            let digits = Array("0123456789abcdef".utf8)
            return [digits[Int(b >> 4)], digits[Int(b & 15)]]
        }.joined())
        try scratch.write("tree/b-hex.txt", hex)
        try scratch.write("tree/c-hex.txt", hex.prefix(700_000))
        let archive = scratch.path + "/out.zip"
        for threads in [1, 2] {
            let summary = try ZipWriter.write(directory: scratch.path + "/tree", to: archive, options: .init(threads: threads))
            #expect(summary.deflatedFiles == 2)
            let test = try run("/usr/bin/unzip", ["-tq", archive])
            #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
        }
    }
}
