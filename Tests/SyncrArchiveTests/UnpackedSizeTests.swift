import Foundation
import Testing
@testable import SyncrArchive

/// The zip-bomb defence refuses bombs and nothing else: data beyond an entry's declared size,
/// and totals over the free space or an explicit limit. A legitimate archive that compresses
/// extremely well (zeros reach ~1030:1 with deflate) unpacks.
@Suite(.timeLimit(.minutes(10))) struct UnpackedSizeTests {
    static let zeros = 64 << 20

    /// 64 MiB of zeros, as Python's `zipfile` writes it with `force_zip64=True` (Info-ZIP,
    /// 7-Zip and Python unpack it).
    static func zerosZip(_ path: String) throws {
        try Python.run(#"""
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("zeros.img", "w", force_zip64=True) as f:
        block = bytes(1 << 20)
        for _ in range(64):
            f.write(block)
"""#, path)
    }

    @Test func zipOf64MiBOfZerosUnpacks() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("zeros.zip")
        try Self.zerosZip(archive)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: archive)[.size] as? Int)
        #expect(Self.zeros / size > 1000, "the archive is past the old 1000:1 rule (\(Self.zeros / size):1)")
        let summary = try unpack(archive, into: scratch.staging).get()
        #expect(summary.bytes == Int64(Self.zeros))
    }

    /// tar.gz went through a ratio rule on the gzip stream as a whole; zeros are no bomb there
    /// either.
    @Test func tarGzOf64MiBOfZerosUnpacks() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("zeros.tar.gz")
        try Python.run(#"""
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz", compresslevel=9) as t:
    info = tarfile.TarInfo("zeros.img"); info.size = 64 << 20
    t.addfile(info, io.BytesIO(bytes(info.size)))
"""#, archive)
        let summary = try Unpack.extract(archive: archive, name: "zeros.tar.gz", into: scratch.staging, stripComponents: 0)
        #expect(summary.bytes == Int64(Self.zeros))
    }

    /// A deflated entry whose central directory (and local header) record 1,000 bytes while its
    /// data inflates to 1 MiB: refused, and no more than the declared bytes reach the disk.
    @Test func entryWhoseDataExceedsItsDeclaredSizeIsRefused() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("liar.zip")
        try Python.run(#"""
import struct, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("liar.bin", bytes(1 << 20))
data = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", data, 22, 1000)                      # local header: uncompressed size
cd = data.rindex(b"PK\x01\x02")
struct.pack_into("<I", data, cd + 24, 1000)                 # central directory: uncompressed size
open(sys.argv[1], "wb").write(data)
"""#, archive)
        let result = unpack(archive, into: scratch.staging)
        guard case .failure(.checksum(_, "liar.bin", let detail)) = result else {
            Issue.record("expected the declared-size refusal, got \(result)")
            return
        }
        #expect(detail == "the data unpacks to more than the 1000 bytes the central directory records")
        let written = (try? FileManager.default.attributesOfItem(atPath: scratch.staging + "/liar.bin")[.size] as? Int) ?? 0
        #expect(written <= 1000)
    }

    /// The explicit limit, with the setting named and how to raise it, for a tar entry: refused
    /// from its header, before its data is written.
    @Test func tarEntryOverTheExplicitLimitIsRefusedFromItsHeader() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("two.tar")
        try Python.run(#"""
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for name, size in (("small", 1000), ("big", 3 << 20)):
        info = tarfile.TarInfo(name); info.size = size
        t.addfile(info, io.BytesIO(bytes(size)))
"""#, archive)
        let limits = ExtractionLimits(maxTotalBytes: 2 << 20, maxTotalBytesSetting: "--max-unpacked-size",
                                      maxTotalBytesRaise: "raise --max-unpacked-size")
        #expect(throws: ArchiveError.limit(archive: "two.tar", entry: "big",
                                           detail: "the archive unpacks to at least 3146728 bytes (3.0 MiB), more than the 2097152 bytes (2.0 MiB) that --max-unpacked-size allows; raise --max-unpacked-size to unpack it")) {
            try Unpack.extract(archive: archive, name: "two.tar", into: scratch.staging, stripComponents: 0, limits: limits)
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.staging + "/big"))
    }

    @Test func byteCountsReadExactlyAndInUnits() {
        #expect(ExtractionTarget.text(1000) == "1000 bytes")
        #expect(ExtractionTarget.text(64 << 20) == "67108864 bytes (64.0 MiB)")
        #expect(ExtractionTarget.text(Int64.max) == "9223372036854775807 bytes (8.0 EiB)")
    }
}
