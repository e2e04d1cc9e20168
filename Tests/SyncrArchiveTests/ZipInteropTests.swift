import Foundation
import Testing
@testable import SyncrArchive

/// Archives written by Info-ZIP `zip` and Python's `zipfile` unpack byte for byte.
@Suite(.timeLimit(.minutes(10))) struct ZipInteropTests {
    /// A source tree with text, random bytes, nested and empty folders, an executable and links.
    func makeSource(_ scratch: ZipScratch) throws -> String {
        let src = scratch.input("src")
        try Python.run(#"""
import os, sys, random
root = sys.argv[1]
os.makedirs(os.path.join(root, "sub/deep"))
os.makedirs(os.path.join(root, "empty"))
open(os.path.join(root, "a.txt"), "w").write("hello\n" * 1000)
open(os.path.join(root, "bin.dat"), "wb").write(random.Random(7).randbytes(300_000))
open(os.path.join(root, "sub/deep/c.txt"), "w").write("deep")
open(os.path.join(root, "zero-length"), "w").close()
open(os.path.join(root, "run.sh"), "w").write("#!/bin/sh\necho hi\n")
os.chmod(os.path.join(root, "run.sh"), 0o755)
os.symlink("a.txt", os.path.join(root, "link"))
os.symlink("../a.txt", os.path.join(root, "sub/uplink"))
os.utime(os.path.join(root, "a.txt"), (1_000_000_000, 1_000_000_000))
"""#, src)
        return src
    }

    @Test("Info-ZIP zip unpacks byte-identically", arguments: [["-r", "-y"], ["-r", "-y", "-0"], ["-r", "-y", "-9"]])
    func infoZip(options: [String]) throws {
        let scratch = try ZipScratch()
        let src = try makeSource(scratch)
        let archive = scratch.input("infozip.zip")
        try Shell.run("/usr/bin/zip", ["-q"] + options + [archive, "."], cwd: src)
        let summary = try unpack(archive, into: scratch.staging).get()
        #expect(summary.symlinks == 2)
        #expect(summary.files == 5)
        let trees = try Tree.snapshot(src, scratch.staging)
        #expect(trees[0] == trees[1])
        #expect(scratch.escaped() == [])

        var st = stat()
        #expect(lstat(scratch.staging + "/run.sh", &st) == 0 && st.st_mode & 0o777 == 0o755, "the executable bit survives")
        #expect(lstat(scratch.staging + "/a.txt", &st) == 0 && st.st_mtim.tv_sec == 1_000_000_000, "the modification time survives")
    }

    /// `zip - -` reads stdin and writes to a pipe, so it cannot seek back: sizes and CRC go into
    /// data descriptors after the data (flag bit 3).
    @Test func infoZipStreamed() throws {
        let scratch = try ZipScratch()
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
        let zipped = try Shell.run("/usr/bin/zip", ["-q", "-", "-"], stdin: payload)
        let archive = scratch.input("streamed.zip")
        try zipped.write(to: URL(fileURLWithPath: archive))
        let reader = try ZipReader(path: archive)
        #expect(reader.entries.map(\.name) == ["-"])
        #expect(reader.entries.first?.hasDataDescriptor == true)
        _ = try unpack(archive, into: scratch.staging).get()
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.staging + "/-")) == payload)
    }

    static let pythonWriter = #"""
import sys, zipfile, io, os
target, mode = sys.argv[1], sys.argv[2]
class Unseekable(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
out = open(target, "wb")
stream = Unseekable(out) if mode == "stream" else out
with zipfile.ZipFile(stream, "w") as z:
    z.writestr("deflated.txt", "compress me " * 5000, compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("stored.bin", bytes(range(256)) * 40, compress_type=zipfile.ZIP_STORED)
    z.writestr("ünïcödé/名前.txt", "utf-8 name", compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("folder/", "")
    with z.open("opened.bin", "w") as f:
        f.write(os.urandom(70_000))
out.close()
"""#

    @Test("Python zipfile archives unpack as Python reads them", arguments: ["seekable", "stream"])
    func pythonZipfile(mode: String) throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("python.zip")
        try Python.run(Self.pythonWriter, archive, mode)
        let reader = try ZipReader(path: archive)
        #expect(reader.entries.contains { $0.name == "ünïcödé/名前.txt" })
        if mode == "stream" { #expect(reader.entries.allSatisfy { $0.isDirectory || $0.hasDataDescriptor }) }
        let summary = try unpack(archive, into: scratch.staging).get()
        #expect(summary.files == 4 && summary.directories == 1)
        let oracle = try ZipOracle.read(archive, staging: scratch.staging)
        #expect(oracle.readable)
        #expect(oracle.unpacked == oracle.tree)
    }

    @Test func stripComponents() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("strip.zip")
        try ZipSpec.write([.folder("pkg-1.0/"), .file("pkg-1.0/README", "r"), .folder("pkg-1.0/bin/"),
                           .file("pkg-1.0/bin/tool", "t"), .file("toplevel", "skipped")], to: archive)
        let summary = try unpack(archive, into: scratch.staging, strip: 1).get()
        #expect(summary.skipped == 2)
        #expect(summary.files == 2)
        let tree = try Tree.snapshot(scratch.staging)[0]
        #expect(Set(tree.keys) == ["README", "bin", "bin/tool"])
    }

    @Test func cp437NamesAndUTF8WithoutTheFlag() {
        #expect(CP437.decode([0x42, 0x65, 0x6E, 0x6F, 0x8C, 0x74]) == "Benoît")
        #expect(CP437.decode(Array(0x80...0xFF).map(UInt8.init)).unicodeScalars.count == 128)
        #expect(ZipText.decodeName(Array("Benoît".utf8), utf8Flag: false) == "Benoît")
        #expect(ZipText.decodeName([0x8C], utf8Flag: false) == "î")
        #expect(ZipText.decodeName([0x8C], utf8Flag: true) == nil)
    }

    @Test func recordsRoundTrip() throws {
        let eocd = ZipEndOfCentralDirectory(entriesOnThisDisk: 3, totalEntries: 3, centralDirectorySize: 0x1234_5678,
                                            centralDirectoryOffset: 0x9ABC_DEF0, commentLength: 7)
        #expect(try ZipEndOfCentralDirectory.parse(eocd.serialize(), archive: "t", position: 0) == eocd)
        #expect(eocd.serialize().count == ZipEndOfCentralDirectory.size)
        #expect(Array(eocd.serialize()[12..<16]) == [0x78, 0x56, 0x34, 0x12], "little-endian")

        let z64 = Zip64EndOfCentralDirectory(entriesOnThisDisk: 70_000, totalEntries: 70_000,
                                             centralDirectorySize: 5 << 32, centralDirectoryOffset: 6 << 32)
        #expect(try Zip64EndOfCentralDirectory.parse(z64.serialize(), archive: "t", position: 0) == z64)
        let locator = Zip64EndOfCentralDirectoryLocator(zip64EndOfCentralDirectoryOffset: 1 << 40)
        #expect(Zip64EndOfCentralDirectoryLocator.parseIfPresent(locator.serialize(), offset: 0) == locator)

        let cd = ZipCentralDirectoryHeader(versionMadeBy: 0x031e, versionNeededToExtract: 20, generalPurposeBitFlag: 0x0808,
                                           compressionMethod: 8, lastModFileTime: 1, lastModFileDate: 2, crc32: 0xDEAD_BEEF,
                                           compressedSize: 10, uncompressedSize: 20, externalFileAttributes: 0o100644 << 16,
                                           relativeOffsetOfLocalHeader: 99, fileName: Array("a/b".utf8), extraField: [1, 0, 0, 0],
                                           fileComment: Array("c".utf8))
        #expect(try ZipCentralDirectoryHeader.parse(cd.serialize(), archive: "t", position: 0) == cd)

        let local = ZipLocalFileHeader(versionNeededToExtract: 20, generalPurposeBitFlag: 0, compressionMethod: 0,
                                       lastModFileTime: 0, lastModFileDate: 0, crc32: 1, compressedSize: 2,
                                       uncompressedSize: 2, fileNameLength: 1, extraFieldLength: 0)
        #expect(try ZipLocalFileHeader.parse(local.serialize(), archive: "t", entry: nil, position: 0) == local)

        let info = Zip64ExtendedInformation(uncompressedSize: 5 << 32, relativeOffsetOfLocalHeader: 7 << 32)
        let field = try #require(ZipExtraField.parseAll(info.serialize())?.first)
        #expect(Zip64ExtendedInformation.parse(field.data, needsUncompressed: true, needsCompressed: false,
                                               needsOffset: true, needsDisk: false) == info)

        for descriptor in [ZipDataDescriptor(crc32: 5, compressedSize: 6, uncompressedSize: 7),
                           ZipDataDescriptor(crc32: 5, compressedSize: 6 << 32, uncompressedSize: 7, hasSignature: false, zip64: true)] {
            #expect(ZipDataDescriptor.candidates(descriptor.serialize()).contains(descriptor))
        }
    }

    @Test func truncatedRecordsNameTheRecord() {
        #expect(throws: ArchiveError.corrupt(archive: "t.zip", entry: nil,
                                             detail: "the central directory file header at offset 9 is cut short (46 bytes needed, 10 there)")) {
            try ZipCentralDirectoryHeader.parse([UInt8](repeating: 0, count: 10), archive: "t.zip", position: 9)
        }
    }
}
