import Foundation
import Testing
@testable import SyncrArchive

/// One entry for Python's `zipfile` to write: it lets a test set any name and any attributes.
struct ZipSpec: Encodable {
    var name: String
    var data: String = ""
    /// Unix mode (type and permission bits), stored in the external attributes, made on Unix.
    var mode: Int = 0o100644
    var deflate = true

    static func file(_ name: String, _ data: String = "data", deflate: Bool = true) -> ZipSpec {
        ZipSpec(name: name, data: data, deflate: deflate)
    }
    static func folder(_ name: String) -> ZipSpec { ZipSpec(name: name, mode: 0o040755, deflate: false) }
    static func link(_ name: String, to target: String) -> ZipSpec {
        ZipSpec(name: name, data: target, mode: 0o120777, deflate: false)
    }

    /// Writes `entries` to `path` with Python's `zipfile`.
    static func write(_ entries: [ZipSpec], to path: String) throws {
        let json = String(decoding: try JSONEncoder().encode(entries), as: UTF8.self)
        try Python.run(#"""
import sys, json, zipfile, warnings
warnings.simplefilter("ignore")  # duplicate names are the point of some tests
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for e in json.loads(sys.argv[2]):
        info = zipfile.ZipInfo(e["name"], date_time=(2020, 1, 2, 3, 4, 6))
        info.create_system = 3
        info.external_attr = e["mode"] << 16
        info.compress_type = zipfile.ZIP_DEFLATED if e["deflate"] else zipfile.ZIP_STORED
        z.writestr(info, e["data"].encode())
"""#, path, json)
    }
}

/// Archives built to attack the extractor: each is refused with an error naming the entry, and
/// nothing appears outside the staging folder.
@Suite(.timeLimit(.minutes(10))) struct ZipMaliciousTests {
    /// Unpacks `entries` and returns the error; fails the test when the archive unpacks.
    func refusal(_ entries: [ZipSpec], limits: ExtractionLimits = ExtractionLimits(),
                 sourceLocation: SourceLocation = #_sourceLocation) throws -> ArchiveError? {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try ZipSpec.write(entries, to: archive)
        let result = unpack(archive, into: scratch.staging, limits: limits)
        #expect(scratch.escaped() == [], "written outside the staging folder", sourceLocation: sourceLocation)
        guard case .failure(let error) = result else {
            Issue.record("the archive was unpacked: \(result)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(error.description.hasPrefix("evil.zip: "), sourceLocation: sourceLocation)
        return error
    }

    @Test(arguments: ["../evil", "../../evil", "../../../evil", "/abs", "a/../../x", "a/../../../../x", "a\\..\\x", "C:x", "a/./../../b"])
    func unsafeNameIsRefused(name: String) throws {
        let error = try refusal([.file("fine.txt"), .file(name)])
        guard case .unsafePath(_, let entry, _)? = error else {
            Issue.record("expected an unsafe path error, got \(String(describing: error))")
            return
        }
        #expect(entry == name)
    }

    @Test func unsafeNameIsRefusedEvenWhenStripped() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try ZipSpec.write([.file("../top/x")], to: archive)
        let result = unpack(archive, into: scratch.staging, strip: 1)
        guard case .failure(.unsafePath(_, "../top/x", _)) = result else {
            Issue.record("expected refusal, got \(result)")
            return
        }
    }

    /// Names checked as the kernel reads them, on bytes: a `/` followed by a combining mark, or
    /// after a prepended one (U+0600), is inside one Character, and a Character-wise check saw
    /// `../\u{301}x` as one harmless component, which `open` climbs out of.
    @Test(arguments: ["../\u{301}evil", "a/../\u{301}../\u{301}x", "a\\\u{301}..\\x", "/\u{301}abs", "x\u{600}/../../y"])
    func unsafeNameHiddenInACharacterIsRefused(name: String) throws {
        let error = try refusal([.file("fine.txt"), .file(name)])
        #expect(error?.entry == name, "\(String(describing: error))")
    }

    /// A link whose name climbs back to the top (`x\u{600}/..`, read as one component by
    /// Characters) pointing far up, then a file written through it: refused at the link.
    @Test func aLinkNameHiddenInCharactersIsRefused() throws {
        let name = String(repeating: "x\u{600}/../", count: 3) + "L\u{600}"
        let error = try refusal([.link(name, to: "../../../outside"), .file("L\u{600}/owned.txt")])
        #expect(error?.entry == name, "\(String(describing: error))")
        #expect(!SafePath.linkStaysInside(linkComponents: ["l"], target: "../\u{301}x"))
        #expect(SafePath.split("a/\u{301}b//c") == ["a", "\u{301}b", "c"])
    }

    @Test func linkOutThenFileThroughIt() throws {
        let error = try refusal([.link("link", to: "../../etc"), .file("link/passwd", "root::0:0")])
        #expect(error?.entry == "link")
        #expect(error?.description.contains("points outside") == true)
    }

    @Test func linkInsideThenFileThroughIt() throws {
        let error = try refusal([.folder("sub/"), .link("link", to: "sub"), .file("link/passwd", "x")])
        guard case .unsafePath(_, "link/passwd", let detail)? = error else {
            Issue.record("expected refusal of link/passwd, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("symbolic link"))
    }

    /// `y -> .` looks harmless and `x -> y/..` stays inside when read as text, but on disk
    /// `y/..` is the staging folder's parent.
    @Test func linkThroughAnotherLinkIsRefused() throws {
        let error = try refusal([.link("y", to: "."), .link("x", to: "y/..")])
        #expect(error?.entry == "x")
    }

    @Test func absoluteLinkIsRefused() throws {
        let error = try refusal([.link("hosts", to: "/etc/hosts")])
        #expect(error?.entry == "hosts")
    }

    /// An absolute link to a file of the folder it was made in is refused as absolute: it was
    /// said to point outside, which it did not where it was made.
    @Test func anAbsoluteLinkIntoTheFolderIsNotSaidToPointOutside() throws {
        let error = try refusal([.file("d/f", "inside"), .link("l", to: "/build/tree/d/f")])
        #expect(error == .unsafePath(archive: "evil.zip", entry: "l",
                                     detail: "an absolute link (/build/tree/d/f): only relative links that stay inside the destination are allowed"))
    }

    @Test func duplicateNameIsRefused() throws {
        let error = try refusal([.file("a.txt", "one"), .file("b.txt"), .file("a.txt", "two")])
        #expect(error == .duplicate(archive: "evil.zip", entry: "a.txt"))
    }

    @Test func duplicateThroughDotIsRefused() throws {
        let error = try refusal([.file("d/a.txt", "one"), .file("d/./a.txt", "two")])
        #expect(error == .duplicate(archive: "evil.zip", entry: "d/./a.txt", first: "d/a.txt", name: "d/a.txt"))
        #expect(error?.description == "evil.zip: d/a.txt and d/./a.txt both unpack to d/a.txt: the archive holds this name twice")
    }

    /// Two paths that stripping makes one: the message named only the second entry and said
    /// the archive held its name twice, which it did not. It names both entries, the name
    /// they share, and the setting to lower, as the user spelled it.
    @Test(arguments: [("strip_components", ExtractionLimits()),
                      ("--strip-components", ExtractionLimits(stripComponentsSetting: "--strip-components"))])
    func namesThatStrippingMakesOneAreRefusedNamingBoth(setting: String, limits: ExtractionLimits) throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("two.zip")
        try ZipSpec.write([.folder("v1/"), .file("v1/bin/x", "one"), .folder("v2/"), .file("v2/bin/x", "two")], to: archive)
        let result = unpack(archive, into: scratch.staging, strip: 1, limits: limits)
        guard case .failure(let error) = result else {
            Issue.record("unpacked: \(result)")
            return
        }
        #expect(error == .duplicate(archive: "two.zip", entry: "v2/bin/x", first: "v1/bin/x", name: "bin/x", strippedBy: setting))
        #expect(error.description == "two.zip: v1/bin/x and v2/bin/x both unpack to bin/x once \(setting) has removed their "
            + "leading folders; lower \(setting) (unpacking the archive once without it shows the layout)")
    }

    @Test(arguments: [false, true])
    func corruptDataIsRefused(deflate: Bool) throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        let text = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 200)
        try ZipSpec.write([.file("first.txt", "ok"), .file("victim.txt", text, deflate: deflate)], to: archive)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
        // The victim's data starts after its local header: find the name, skip it.
        let name = Array("victim.txt".utf8)
        let at = try #require((0..<bytes.count).first { bytes[$0...].starts(with: name) })
        bytes[at + name.count + 40] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        let result = unpack(archive, into: scratch.staging)
        #expect(scratch.escaped() == [])
        guard case .failure(let error) = result else {
            Issue.record("a flipped byte went unnoticed")
            return
        }
        #expect(error.entry == "victim.txt", "\(error)")
        if !deflate { #expect(error.description.contains("CRC-32"), "\(error)") }
    }

    @Test func truncatedArchiveIsRefused() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("whole.zip")
        try ZipSpec.write([.folder("d/"), .file("d/a.txt", String(repeating: "a", count: 5000)),
                           .file("b.bin", String(repeating: "xyz", count: 3000), deflate: false)], to: archive)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
        var cuts = [0, 1, 4, 21, 29, 30, 45, 100, bytes.count / 2, bytes.count - 100, bytes.count - 23, bytes.count - 22, bytes.count - 1]
        cuts = cuts.filter { $0 >= 0 && $0 < bytes.count }
        for cut in cuts {
            let staging = scratch.path + "/staging-\(cut)"
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
            let path = scratch.input("cut-\(cut).zip")
            try Data(bytes[0..<cut]).write(to: URL(fileURLWithPath: path))
            let result = unpack(path, into: staging)
            guard case .failure(let error) = result else {
                Issue.record("cut at \(cut) of \(bytes.count): unpacked")
                continue
            }
            #expect(error.description.hasPrefix("cut-\(cut).zip: "), "\(error)")
        }
        // A hole in the middle, with the end records kept: every offset after it is wrong.
        let path = scratch.input("hole.zip")
        try Data(bytes[0..<200] + bytes[400...]).write(to: URL(fileURLWithPath: path))
        let staging = scratch.path + "/staging-hole"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        guard case .failure = unpack(path, into: staging) else {
            Issue.record("an archive with a hole unpacked")
            return
        }
    }

    /// The ratio rule is for callers that ask for it (the fuzzers); syncr does not.
    @Test func ratioLimitStopsAZipWhenAsked() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try Python.run(#"""
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    with z.open("zeros.bin", "w") as f:
        block = bytes(1 << 20)
        for _ in range(50):
            f.write(block)
"""#, archive)
        let limits = ExtractionLimits(maxRatio: 100, ratioFloor: 1 << 20)
        let result = unpack(archive, into: scratch.staging, limits: limits)
        guard case .failure(.limit(_, let entry, let detail)) = result else {
            Issue.record("expected the ratio limit, got \(result)")
            return
        }
        #expect(entry == "zeros.bin")
        #expect(detail.contains("expands more than 100 times"))
        #expect(scratch.escaped() == [])
        // The default limits have no ratio rule: a 50 MiB file of zeros is not a bomb.
        let scratch2 = try ZipScratch()
        let summary = try unpack(archive, into: scratch2.staging).get()
        #expect(summary.bytes == 50 << 20)
    }

    /// The central directory declares every size (and the reader holds each entry to it), so
    /// a total over the limit is refused before anything is written.
    @Test func zipOverTheTotalSizeLimitIsRefusedBeforeWriting() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try ZipSpec.write([.file("a", String(repeating: "a", count: 3000)), .file("b", String(repeating: "b", count: 3000))],
                          to: archive)
        let result = unpack(archive, into: scratch.staging, limits: ExtractionLimits(maxTotalBytes: 4000))
        #expect(result == .failure(.limit(archive: "evil.zip", entry: nil,
                                          detail: "the archive unpacks to 6000 bytes (5.9 KiB), more than the 4000 bytes (3.9 KiB) that the size limit allows; raise the size limit to unpack it")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.staging) == [])
    }

    @Test func entryCountLimit() throws {
        let error = try refusal((0..<10).map { .file("f\($0)") }, limits: ExtractionLimits(maxEntries: 5))
        guard case .limit(_, _, let detail)? = error else {
            Issue.record("expected the entry limit, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("more than 5 entries"))
    }

    /// The reader refuses more entries than allowed from the end record's count, before it
    /// reads the central directory into memory.
    @Test func entryCountLimitStopsTheReaderFirst() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("many.zip")
        try ZipSpec.write((0..<10).map { .file("f\($0)") }, to: archive)
        #expect(throws: ArchiveError.limit(archive: archive, entry: nil, detail: "more than 5 entries (10)")) {
            try ZipReader(path: archive, maxEntries: 5)
        }
        #expect(try ZipReader(path: archive, maxEntries: 10).entries.count == 10)
    }

    /// A "better zip bomb" (Fifield, 2019): one entry's stored data quotes the next entry's
    /// local header and data, so both read with valid CRCs. Python 3.11.7 reads both.
    @Test func overlappingEntriesAreRefused() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try Python.run(#"""
import sys, struct, zlib
def lfh(name, data):
    return struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data), len(name), 0) + name
def cdh(name, data, offset):
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031e, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data),
                       len(name), 0, 0, 0, 0, 0o100644 << 16, offset) + name
inner_name, outer_name = b"inner.txt", b"outer.txt"
inner_data = b"payload " * 100
inner = lfh(inner_name, inner_data) + inner_data
outer = lfh(outer_name, inner) + inner          # outer's data is inner's header and data
inner_offset = 30 + len(outer_name)
cd = cdh(outer_name, inner, 0) + cdh(inner_name, inner_data, inner_offset)
eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2, 2, len(cd), len(outer), 0)
open(sys.argv[1], "wb").write(outer + cd + eocd)
"""#, archive)
        let oracle = try ZipOracle.read(archive, staging: scratch.staging)
        #expect(oracle.readable, "Python reads both entries: the overlap is syncr's to catch")
        let result = unpack(archive, into: scratch.staging)
        guard case .failure(.corrupt(_, let entry, let detail)) = result else {
            Issue.record("expected a refusal of the overlap, got \(result)")
            return
        }
        #expect(entry == "inner.txt")
        #expect(detail.contains("overlap"))
        #expect(try Tree.snapshot(scratch.staging)[0].isEmpty, "refused before anything was written")
    }

    /// Two central directory entries that share one local header.
    @Test func entriesSharingALocalHeaderAreRefused() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try Python.run(#"""
import sys, struct, zlib
name, data = b"same.txt", b"x" * 1000
lfh = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data), len(name), 0) + name
cdh = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031e, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data),
                  len(name), 0, 0, 0, 0, 0o100644 << 16, 0) + name
body = lfh + data
cd = cdh * 3
eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 3, 3, len(cd), len(body), 0)
open(sys.argv[1], "wb").write(body + cd + eocd)
"""#, archive)
        guard case .failure(.corrupt(_, "same.txt", let detail)) = unpack(archive, into: scratch.staging) else {
            Issue.record("expected a refusal of the overlap")
            return
        }
        #expect(detail.contains("overlap"))
    }

    @Test func unknownMethodIsRefused() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        // bzip2 (method 12) through Python.
        try Python.run(#"""
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("ok.txt", "fine")
    z.writestr("packed.bz2", "x" * 100, compress_type=zipfile.ZIP_BZIP2)
"""#, archive)
        guard case .failure(.unsupported(_, "packed.bz2", let detail)) = unpack(archive, into: scratch.staging) else {
            Issue.record("expected method 12 to be refused")
            return
        }
        #expect(detail == "compressed with method 12 (bzip2), which syncr does not unpack (it reads stored and deflate "
            + "entries); re-create the archive with deflate or stored (zip -Z deflate; 7-Zip: -mm=Deflate)")
    }

    /// A method syncr does not read is named as APPNOTE 4.4.5 names it, not by its number
    /// alone; one APPNOTE does not assign keeps its number. The entry's method is set in both
    /// headers of a stored entry, as the tool that wrote it would.
    @Test(arguments: [(14, "method 14 (LZMA)"), (93, "method 93 (Zstandard)"), (95, "method 95 (XZ)"),
                      (99, "method 99 (AES encryption)"), (57, "method 57")])
    func anUnreadableMethodIsNamed(method: Int, named: String) throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try Python.run(#"""
import sys, zipfile, struct
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("data.bin", "x" * 100)
b = bytearray(open(sys.argv[1], "rb").read())
method = struct.pack("<H", int(sys.argv[2]))
b[8:10] = method
cd = b.index(b"PK\x01\x02")
b[cd + 10:cd + 12] = method
open(sys.argv[1], "wb").write(b)
"""#, archive, String(method))
        guard case .failure(let error) = unpack(archive, into: scratch.staging) else {
            Issue.record("expected method \(method) to be refused")
            return
        }
        let remedy = method == 99 ? "re-create the archive without encryption, with deflate or stored"
            : "re-create the archive with deflate or stored (zip -Z deflate; 7-Zip: -mm=Deflate)"
        #expect(error == .unsupported(archive: "evil.zip", entry: "data.bin",
                                      detail: "compressed with \(named), which syncr does not unpack (it reads stored and "
                                        + "deflate entries); \(remedy)"))
    }

    /// An entry flagged as encrypted (bit 0: traditional PKWARE, bit 6: strong encryption), in
    /// both headers or only in the local one, is refused before anything is written for it. Its
    /// data is stored plain with the right CRC, so an extractor that ignored the flag would
    /// unpack it without complaint.
    @Test(arguments: [(0x0001, 0x0001), (0x0040, 0x0040), (0x0001, 0x0000)])
    func encryptedEntriesAreRefused(localFlags: Int, centralFlags: Int) throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("evil.zip")
        try Python.run(#"""
import sys, struct, zlib
local_flags, central_flags = int(sys.argv[2]), int(sys.argv[3])
name, data = b"secret.txt", b"not really encrypted\n"
crc = zlib.crc32(data)
lfh = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, local_flags, 0, 0, 0x21, crc, len(data), len(data), len(name), 0) + name
cdh = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031e, 20, central_flags, 0, 0, 0x21, crc, len(data), len(data),
                  len(name), 0, 0, 0, 0, 0o100644 << 16, 0) + name
body = lfh + data
eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(cdh), len(body), 0)
open(sys.argv[1], "wb").write(body + cdh + eocd)
"""#, archive, String(localFlags), String(centralFlags))
        let result = unpack(archive, into: scratch.staging)
        guard case .failure(.unsupported(_, "secret.txt", let detail)) = result else {
            Issue.record("expected the encrypted entry to be refused, got \(result)")
            return
        }
        #expect(detail == "encrypted entries are not supported")
        #expect(!FileManager.default.fileExists(atPath: scratch.staging + "/secret.txt"))
        #expect(scratch.escaped() == [])
    }
}

/// Names with control characters are refused or unpacked as they are, but never printed raw:
/// an escape sequence in a name rewrote the terminal line into a fake "unpacked" message.
@Suite(.timeLimit(.minutes(5))) struct ArchiveErrorTextTests {
    @Test func controlCharactersInNamesAreShownEscaped() {
        let error = ArchiveError.unsafePath(archive: "esc.zip", entry: "/\u{1B}[2K\rsyncr: unpacked\n\u{9B}x", detail: "absolute paths are not allowed")
        #expect(error.description == "esc.zip: /\\u{1B}[2K\\u{D}syncr: unpacked\\u{A}\\u{9B}x: refused: absolute paths are not allowed")
    }
}

/// The bytes say which archive a file is where they are unmistakable; the name only where
/// they are not (a zip served as `latest.tar.gz` was read as a tar cut short).
@Suite(.timeLimit(.minutes(5))) struct ArchiveFormatChoiceTests {
    @Test func aZipNamedTarGzIsUnpackedAsAZip() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("real.zip")
        try ZipSpec.write([.file("a.txt", "zipped")], to: archive)
        let summary = try Unpack.extract(archive: archive, name: "latest.tar.gz", into: scratch.staging, stripComponents: 0)
        #expect(summary.files == 1)
        #expect(try String(contentsOfFile: scratch.staging + "/a.txt", encoding: .utf8) == "zipped")
    }

    /// A tar (ustar magic) served as `.zip` is read as a tar.
    @Test func aTarNamedZipIsUnpackedAsATar() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("real.tar")
        try Python.run(#"""
import sys, tarfile, io
with tarfile.open(sys.argv[1], "w", format=tarfile.USTAR_FORMAT) as t:
    info = tarfile.TarInfo("a.txt"); info.size = 3
    t.addfile(info, io.BytesIO(b"tar"))
"""#, archive)
        #expect(try Unpack.format(of: archive, name: "download.zip") == .tar)
    }

    @Test func whatTheBytesCannotTellTheNameDoes() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("noise.bin")
        try Data("neither zip nor gzip nor tar".utf8).write(to: URL(fileURLWithPath: archive))
        #expect(throws: ArchiveError.self) { try Unpack.format(of: archive, name: "x.bin") }
        #expect(try Unpack.format(of: archive, name: "x.tar") == .tar)
    }
}

/// `strip_components` that leaves nothing of any path unpacked an empty folder with exit 0 (it
/// replaced the old one): an upstream that changed its layout went unnoticed.
@Suite(.timeLimit(.minutes(5))) struct StripEverythingTests {
    @Test func aZipStrippedToNothingIsAnError() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("flat.zip")
        try ZipSpec.write([.file("a.txt"), .folder("d/"), .file("d/b.txt")], to: archive)
        #expect(throws: ArchiveError.stripped(archive: "flat.zip", entry: nil, count: 2)) {
            try Unpack.extract(archive: archive, name: "flat.zip", into: scratch.staging, stripComponents: 2)
        }
    }

    @Test func aTarStrippedToNothingIsAnError() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("flat.tar.gz")
        try Python.run(#"""
import sys, tarfile, io
with tarfile.open(sys.argv[1], "w:gz") as t:
    for name in ("a.txt", "d/b.txt"):
        info = tarfile.TarInfo(name); info.size = 1
        t.addfile(info, io.BytesIO(b"x"))
"""#, archive)
        do {
            _ = try Unpack.extract(archive: archive, name: "flat.tar.gz", into: scratch.staging, stripComponents: 2)
            Issue.record("unpacked")
        } catch {
            #expect(error == .stripped(archive: "flat.tar.gz", entry: nil, count: 2))
            #expect(error.description.contains("strip_components 2 leaves nothing of any entry's path"))
        }
    }

    /// `syncr unzip`'s limits name its flag, `--strip-components`, where a manifest's name its key.
    @Test func theMessageNamesTheSettingAsTheUserSpelledIt() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("flat.zip")
        try ZipSpec.write([.file("a.txt")], to: archive)
        let limits = ExtractionLimits(stripComponentsSetting: "--strip-components")
        let expected = ArchiveError.stripped(archive: "flat.zip", entry: nil, count: 1, setting: "--strip-components")
        #expect(throws: expected) {
            try Unpack.extract(archive: archive, name: "flat.zip", into: scratch.staging, stripComponents: 1, limits: limits)
        }
        #expect(expected.description == "flat.zip: --strip-components 1 leaves nothing of any entry's path: the archive is "
            + "not laid out as expected; lower --strip-components (unpacking it once without it shows the layout)")
    }

    /// The note of files left out names the setting as the user spelled it too.
    @Test func theNoteOfFilesLeftOutNamesTheSetting() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("mixed.zip")
        try ZipSpec.write([.file("NOTES.txt"), .folder("top/"), .file("top/a.txt")], to: archive)
        let limits = ExtractionLimits(stripComponentsSetting: "--strip-components")
        let summary = try Unpack.extract(archive: archive, name: "mixed.zip", into: scratch.staging, stripComponents: 1, limits: limits)
        #expect(summary.notes == ["--strip-components 1 left out 1 file with no more path than that: NOTES.txt"])
    }
}

/// What other tools write and unpack: a zip's `./` entry, a tar's repeated folder entry.
@Suite(.timeLimit(.minutes(5))) struct ArchiveCompatibilityTests {
    @Test func aZipsOwnRootEntryIsSkipped() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("dot.zip")
        try ZipSpec.write([.folder("./"), .file("a.txt", "ok")], to: archive)
        let summary = try Unpack.extract(archive: archive, name: "dot.zip", into: scratch.staging, stripComponents: 0)
        #expect(summary.files == 1)
    }

    @Test func aRepeatedFolderEntryIsTaken() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("dupdir.tar")
        try Python.run(#"""
import sys, tarfile, io
with tarfile.open(sys.argv[1], "w") as t:
    for name in ("d", "d/sub", "d/sub"):
        info = tarfile.TarInfo(name); info.type = tarfile.DIRTYPE; info.mode = 0o755; t.addfile(info)
    info = tarfile.TarInfo("d/sub/f"); info.size = 1; t.addfile(info, io.BytesIO(b"x"))
"""#, archive)
        let summary = try Unpack.extract(archive: archive, name: "dupdir.tar", into: scratch.staging, stripComponents: 0)
        #expect(summary.files == 1)
        // A file and a folder of one name stay refused.
        let clash = scratch.input("clash.tar")
        try Python.run(#"""
import sys, tarfile, io
with tarfile.open(sys.argv[1], "w") as t:
    info = tarfile.TarInfo("d"); info.size = 1; t.addfile(info, io.BytesIO(b"x"))
    info = tarfile.TarInfo("d"); info.type = tarfile.DIRTYPE; t.addfile(info)
"""#, clash)
        let other = try ZipScratch()
        #expect(throws: ArchiveError.self) {
            try Unpack.extract(archive: clash, name: "clash.tar", into: other.staging, stripComponents: 0)
        }
    }

    /// Entries `strip_components` leaves out count against the limits too: a tar.gz of
    /// stripped headers created nothing, and every name was kept.
    @Test func strippedTarEntriesCountAgainstTheLimits() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("flat.tar.gz")
        try Python.run(#"""
import sys, tarfile, io
with tarfile.open(sys.argv[1], "w:gz") as t:
    for i in range(50):
        info = tarfile.TarInfo("n" * 100 + str(i)); info.size = 0
        t.addfile(info, io.BytesIO(b""))
    info = tarfile.TarInfo("d/kept"); info.size = 1
    t.addfile(info, io.BytesIO(b"x"))
"""#, archive)
        var limits = ExtractionLimits()
        limits.maxEntries = 20
        #expect(throws: ArchiveError.limit(archive: "flat.tar.gz", entry: nil, detail: "more than 20 entries")) {
            try Unpack.extract(archive: archive, name: "flat.tar.gz", into: scratch.staging, stripComponents: 1, limits: limits)
        }
    }

    /// Names are kept while unpacking: their total is bounded, so memory is too.
    @Test func theNamesTotalIsLimited() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("names.zip")
        try ZipSpec.write((0..<20).map { .file(String(repeating: "n", count: 100) + "\($0)") }, to: archive)
        var limits = ExtractionLimits()
        limits.maxNameBytes = 1000
        #expect(throws: ArchiveError.self) {
            try Unpack.extract(archive: archive, name: "names.zip", into: scratch.staging, stripComponents: 0, limits: limits)
        }
    }

    /// With a component stripped, what each stored name had before the short one it unpacks to
    /// is kept (to name both entries of a collision): once per different folder, and counted
    /// against the total. One long top folder shared by every entry (a GitHub tarball) costs
    /// its bytes once; a long folder per entry costs them every time, and is refused.
    @Test func theStrippedFoldersCountTowardTheTotalOnce() throws {
        let scratch = try ZipScratch()
        var limits = ExtractionLimits()
        limits.maxNameBytes = 1000
        let shared = scratch.input("shared.zip")
        try ZipSpec.write((0..<20).map { .file(String(repeating: "t", count: 200) + "/\($0)") }, to: shared)
        let summary = try Unpack.extract(archive: shared, name: "shared.zip", into: scratch.staging, stripComponents: 1,
                                         limits: limits)
        #expect(summary.files == 20)
        let apart = scratch.input("apart.zip")
        try FileManager.default.createDirectory(atPath: scratch.staging + "2", withIntermediateDirectories: true)
        try ZipSpec.write((0..<20).map { .file(String(repeating: "t", count: 200) + "\($0)/\($0)") }, to: apart)
        #expect(throws: ArchiveError.limit(archive: "apart.zip", entry: nil, detail: "the entries' names add up to more than "
                                            + "1000 bytes, which this archive's size does not need: it is built to fill memory")) {
            try Unpack.extract(archive: apart, name: "apart.zip", into: scratch.staging + "2", stripComponents: 1, limits: limits)
        }
    }
}

/// A legal path too long for the system (with the destination's path) names the entry and what
/// to do: it named syncr's staging folder in 4 KiB of path.
@Suite(.timeLimit(.minutes(5))) struct LongPathTests {
    @Test func aPathTooLongForTheSystemNamesTheEntry() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("deep.zip")
        let name = String(repeating: String(repeating: "d", count: 200) + "/", count: 22) + "f.txt"
        try ZipSpec.write([.file(name)], to: archive)
        do {
            _ = try Unpack.extract(archive: archive, name: "deep.zip", into: scratch.staging, stripComponents: 0)
            Issue.record("unpacked")
        } catch {
            #expect(error.entry == name)
            #expect(error.description.contains("the path is longer than this system allows"), "\(error.description.prefix(300))")
        }
    }
}

/// A zip with bytes in front (a self-extracting stub, `cat stub.sh a.zip`): said as such, not
/// as a central directory header that runs past its end.
@Suite(.timeLimit(.minutes(5))) struct PrependedZipTests {
    @Test func bytesBeforeTheArchiveAreNamed() throws {
        let scratch = try ZipScratch()
        let plain = scratch.input("plain.zip")
        try ZipSpec.write([.file("a.txt", "ok"), .file("b.txt", "ok")], to: plain)
        let sfx = scratch.input("sfx.zip")
        try (Data("#!/bin/sh\nexit 0\n".utf8) + Data(contentsOf: URL(fileURLWithPath: plain))).write(to: URL(fileURLWithPath: sfx))
        do {
            _ = try Unpack.extract(archive: sfx, name: "sfx.zip", into: scratch.staging, stripComponents: 0)
            Issue.record("unpacked")
        } catch {
            #expect(error.description.contains("17 bytes come before the zip archive itself"), "\(error)")
        }
    }
}
