import Foundation
import Testing
@testable import SyncrArchive

/// Hostile and broken archives: each is refused with an error that names the entry, and
/// nothing lands outside the staging folder.
@Suite(.timeLimit(.minutes(10))) struct TarMaliciousTests {
    /// A hostile archive built by a Python script (tarfile writes any name and link).
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Python lines run inside `with tarfile.open(<name>.tar, "w", format=GNU_FORMAT) as t:`.
        var entries: String
        var expected: ArchiveError
        /// Leading components to strip.
        var strip = 0
        var testDescription: String { name }
    }

    static let archive = "hostile.tar"

    static let cases: [Case] = [
        Case(name: "dotDotName", entries: """
            add(t, "../x", data=b"escaped")
            """, expected: .unsafePath(archive: archive, entry: "../x", detail: "'..' would leave the destination")),
        Case(name: "absoluteName", entries: """
            add(t, "/abs", data=b"escaped")
            """, expected: .unsafePath(archive: archive, entry: "/abs", detail: "absolute paths are not allowed")),
        Case(name: "dotDotInside", entries: """
            add(t, "a/", tarfile.DIRTYPE, mode=0o755)
            add(t, "a/../../x", data=b"escaped")
            """, expected: .unsafePath(archive: archive, entry: "a/../../x", detail: "'..' would leave the destination")),
        Case(name: "symlinkOutThenFileThroughIt", entries: """
            add(t, "l", tarfile.SYMTYPE, linkname="../../etc")
            add(t, "l/passwd", data=b"root::0:0::/:/bin/sh")
            """, expected: .unsafePath(archive: archive, entry: "l", detail: "the link points outside the destination (../../etc)")),
        Case(name: "symlinkInsideThenFileThroughIt", entries: """
            add(t, "d/", tarfile.DIRTYPE, mode=0o755)
            add(t, "l", tarfile.SYMTYPE, linkname="d")
            add(t, "l/f", data=b"through the link")
            """, expected: .unsafePath(archive: archive, entry: "l/f", detail: "it would be written through the symbolic link l")),
        Case(name: "symlinkChainClimbsOut", entries: """
            add(t, "sub/", tarfile.DIRTYPE, mode=0o755)
            add(t, "sub/a", tarfile.SYMTYPE, linkname="..")
            add(t, "sub/b", tarfile.SYMTYPE, linkname="a/..")
            """, expected: .unsafePath(archive: archive, entry: "sub/b", detail: "the link's target goes back up with '..' after "
                                     + "a name (a/..), which another link could lead outside the destination")),
        Case(name: "absoluteSymlink", entries: """
            add(t, "d/f", data=b"inside")
            add(t, "l", tarfile.SYMTYPE, linkname="/tmp/x/d/f")
            """, expected: .unsafePath(archive: archive, entry: "l", detail: "an absolute link (/tmp/x/d/f): only relative "
                                     + "links that stay inside the destination are allowed")),
        Case(name: "hardLinkToEtcPasswd", entries: """
            add(t, "passwd", tarfile.LNKTYPE, linkname="/etc/passwd")
            """, expected: .unsafePath(archive: archive, entry: "passwd", detail: "its hard link target /etc/passwd: absolute paths are not allowed")),
        Case(name: "hardLinkToDotDot", entries: """
            add(t, "x", tarfile.LNKTYPE, linkname="../x")
            """, expected: .unsafePath(archive: archive, entry: "x", detail: "its hard link target ../x: '..' would leave the destination")),
        Case(name: "hardLinkToLaterFile", entries: """
            add(t, "early", tarfile.LNKTYPE, linkname="later")
            add(t, "later", data=b"data")
            """, expected: .unsafePath(archive: archive, entry: "early", detail: "a hard link must name a file extracted before it (later)")),
        Case(name: "duplicateNames", entries: """
            add(t, "a.txt", data=b"first")
            add(t, "a.txt", data=b"second")
            """, expected: .duplicate(archive: archive, entry: "a.txt")),
        Case(name: "duplicateThroughDot", entries: """
            add(t, "a.txt", data=b"first")
            add(t, "./a.txt", data=b"second")
            """, expected: .duplicate(archive: archive, entry: "./a.txt", first: "a.txt", name: "a.txt")),
        Case(name: "duplicateThroughStripping", entries: """
            add(t, "v1/a.txt", data=b"first")
            add(t, "v2/a.txt", data=b"second")
            """, expected: .duplicate(archive: archive, entry: "v2/a.txt", first: "v1/a.txt", name: "a.txt",
                                     strippedBy: "strip_components"), strip: 1),
        Case(name: "characterDevice", entries: """
            add(t, "null", tarfile.CHRTYPE, devmajor=1, devminor=3)
            """, expected: .unsupported(archive: archive, entry: "null", detail: "a character device: syncr unpacks only files, folders and links")),
        Case(name: "fifo", entries: """
            add(t, "pipe", tarfile.FIFOTYPE)
            """, expected: .unsupported(archive: archive, entry: "pipe", detail: "a FIFO: syncr unpacks only files, folders and links")),
        Case(name: "unknownType", entries: """
            add(t, "odd", b"Z")
            """, expected: .unsupported(archive: archive, entry: "odd", detail: "unknown entry type 'Z'")),
    ]

    /// `<scratch>/outer/box/staging`: a link two levels up from staging lands in `outer`, so
    /// checking that `outer` and `box` hold nothing else catches any escape.
    static func extractContained(_ archive: String, _ scratch: Scratch,
                                 options: TarExtractionOptions = .init()) throws -> ArchiveError? {
        let staging = try scratch.folder("outer/box/staging")
        let error = #expect(throws: ArchiveError.self) {
            try TarExtractor.extract(archive: archive, into: staging, options: options)
        }
        #expect(listing(scratch.at("outer")) == ["box"])
        #expect(listing(scratch.at("outer/box")) == ["staging"])
        return error
    }

    @Test("Hostile names and links are refused, naming the entry", arguments: cases)
    func hostileArchive(_ hostile: Case) throws {
        let scratch = try Scratch(hostile.name)
        try python("""
        with tarfile.open("\(Self.archive)", "w", format=tarfile.GNU_FORMAT) as t:
        \(hostile.entries.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        """, cwd: scratch.path)
        let error = try Self.extractContained(scratch.at(Self.archive), scratch, options: .init(stripComponents: hostile.strip))
        #expect(error == hostile.expected)
    }

    /// Two names that differ only in Unicode normalization are two files on the disk (as GNU
    /// tar unpacks them), not one name twice; a hard link names the one it means.
    @Test("Names that differ only in their Unicode normalization are two files")
    func namesDifferingOnlyInNormalization() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("norm.tar", "w", format=tarfile.PAX_FORMAT) as t:
            add(t, "caf\\u00e9.txt", data=b"composed")
            add(t, "cafe\\u0301.txt", data=b"decomposed")
            add(t, "link.txt", tarfile.LNKTYPE, linkname="cafe\\u0301.txt")
        """, cwd: scratch.path)
        let staging = try scratch.folder("staging")
        _ = try TarExtractor.extract(archive: scratch.at("norm.tar"), into: staging)
        let names = try FileManager.default.contentsOfDirectory(atPath: staging).map { Array($0.utf8) }
        #expect(names.count == 3, "\(names)")
        #expect(FileManager.default.contents(atPath: staging + "/caf\u{E9}.txt") == Data("composed".utf8))
        #expect(FileManager.default.contents(atPath: staging + "/cafe\u{301}.txt") == Data("decomposed".utf8))
        #expect(FileManager.default.contents(atPath: staging + "/link.txt") == Data("decomposed".utf8))
    }

    @Test("Device files and FIFOs can be skipped instead, and are listed")
    func specialFilesSkipped() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("specialFilesSkipped.tar", "w") as t:
            add(t, "null", tarfile.CHRTYPE, devmajor=1, devminor=3)
            add(t, "pipe", tarfile.FIFOTYPE)
            add(t, "a.txt", data=b"a")
        """, cwd: scratch.path)
        let staging = try scratch.folder("staging")
        let summary = try TarExtractor.extract(archive: scratch.at("specialFilesSkipped.tar"), into: staging,
                                               options: .init(specialFiles: .skip))
        #expect(summary.skipped == ["null", "pipe"])
        #expect(listing(staging) == ["a.txt"])
    }

    @Test("A header with a wrong checksum is refused")
    func badHeaderChecksum() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("badHeaderChecksum.tar", "w") as t:
            add(t, "good.txt", data=b"good")
            add(t, "bad.txt", data=b"bad")
        raw = bytearray(open("badHeaderChecksum.tar", "rb").read())
        raw[1024 + 100] ^= 1   # the mode field of the second header
        open("badHeaderChecksum.tar", "wb").write(raw)
        """, cwd: scratch.path)
        let error = try Self.extractContained(scratch.at("badHeaderChecksum.tar"), scratch)
        guard case .corrupt(_, let entry, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(entry == "bad.txt")
        #expect(detail.contains("header checksum mismatch at offset 1024 (after good.txt)"))
    }

    /// Cuts of one archive: `good.txt` (5 bytes, header at 0), `second.txt` (2000 bytes,
    /// header at 1024, data at 1536..<3536, padded to 3584), then the end blocks at 3584. The
    /// gzip cut drops the last bytes of the gzip trailer: all the tar is there, but not its CRC.
    static let cuts: [(cut: Int, gzip: Bool, entry: String?, detail: String)] = [
        (1024 + 300, false, "second.txt", "cut short inside its header (300 of 512 bytes at offset 1024)"),
        (1024 + 50, false, "good.txt", "cut short inside the header after this entry (50 of 512 bytes at offset 1024)"),
        (1536 + 1000, false, "second.txt", "cut short inside its data (1000 of 2000 bytes)"),
        (3536 + 10, false, "second.txt", "cut short in the padding after this entry's data"),
        (3584, false, "second.txt", "the archive stops after this entry without its end-of-archive blocks: it is probably cut short"),
        (0, false, nil, "the archive is empty"),
        (-4, true, "second.txt", "the gzip stream is cut short"),
    ]

    @Test("A truncated archive is refused, naming the entry it was cut in", arguments: cuts)
    func truncatedArchive(cut: Int, gzip: Bool, entry: String?, detail: String) throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("whole.tar", "w") as t:
            add(t, "good.txt", data=b"good\\n")
            add(t, "second.txt", data=bytes(range(250)) * 8)
        whole = open("whole.tar", "rb").read()
        if \(gzip ? "True" : "False"):
            whole = gzip.compress(whole, mtime=0)
        cut = whole[:\(cut)]
        open("truncatedArchive", "wb").write(cut)
        """, cwd: scratch.path)
        let error = try Self.extractContained(scratch.at("truncatedArchive"), scratch)
        #expect(error == .corrupt(archive: "truncatedArchive", entry: entry, detail: detail))
    }

    @Test("An archive ending after one zero block is read, with a note (GNU tar warns)")
    func loneZeroBlock() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("loneZeroBlock.tar", "w") as t:
            add(t, "a.txt", data=b"a")
        raw = open("loneZeroBlock.tar", "rb").read()
        open("loneZeroBlock.tar", "wb").write(raw[:1024 + 512])
        """, cwd: scratch.path)
        let summary = try TarExtractor.extract(archive: scratch.at("loneZeroBlock.tar"), into: try scratch.folder("staging"))
        #expect(summary.files == 1)
        #expect(summary.notes == ["the archive ends after a single zero block (a complete archive has two)"])
    }

    @Test("A gzip bomb (50 MB of zeros) is stopped by the ratio limit, naming the entry")
    func gzipBombRatio() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("gzipBombRatio.tar.gz", "w:gz") as t:
            add(t, "zeros.bin", data=bytes(50_000_000))
        """, cwd: scratch.path)
        let limits = ExtractionLimits(maxRatio: 50, ratioFloor: 1 << 20)
        let error = try Self.extractContained(scratch.at("gzipBombRatio.tar.gz"), scratch, options: .init(limits: limits))
        guard case .limit(_, let entry, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(entry == "zeros.bin")
        #expect(detail.hasPrefix("the gzip stream expands more than 50 times"))
        // Stopped early: far less than the whole file reached the disk.
        var st = stat()
        #expect(lstat(scratch.at("outer/box/staging/zeros.bin"), &st) == 0 && st.st_size < 4 << 20)
    }

    @Test("The entry-count and total-size limits stop an archive")
    func countAndSizeLimits() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("countAndSizeLimits.tar", "w") as t:
            for i in range(10):
                add(t, "f%d" % i, data=b"x" * 1000)
        """, cwd: scratch.path)
        let archive = scratch.at("countAndSizeLimits.tar")
        let countError = try Self.extractContained(archive, scratch, options: .init(limits: ExtractionLimits(maxEntries: 3)))
        #expect(countError == .limit(archive: "countAndSizeLimits.tar", entry: nil, detail: "more than 3 entries"))

        let scratch2 = try Scratch()
        let sizeError = try Self.extractContained(archive, scratch2, options: .init(limits: ExtractionLimits(maxTotalBytes: 4500)))
        #expect(sizeError == .limit(archive: "countAndSizeLimits.tar", entry: "f4",
                                    detail: "the archive unpacks to at least 5000 bytes (4.9 KiB), more than the 4500 bytes (4.4 KiB) that the size limit allows; raise the size limit to unpack it"))
    }

    @Test("GNU sparse files (old S type and pax GNU.sparse) are refused as unsupported", arguments: ["gnu", "pax"])
    func sparseFiles(format: String) throws {
        let scratch = try Scratch()
        try run("sh", ["-c", """
            set -e
            truncate -s 1M holes.img
            printf 'data' >> holes.img
            tar --format=\(format) --sparse -cf sparseFiles.tar holes.img
            """], cwd: scratch.path)
        let error = try Self.extractContained(scratch.at("sparseFiles.tar"), scratch)
        #expect(error == .unsupported(archive: "sparseFiles.tar", entry: "holes.img",
                                      detail: "GNU sparse files are not supported"))
    }

    @Test("A name that is not UTF-8 is refused as unsupported")
    func nonUTF8Name() throws {
        let scratch = try Scratch()
        try python("""
        with tarfile.open("nonUTF8Name.tar", "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as t:
            add(t, "caf\\u00e9.txt", data=b"x")
        """, cwd: scratch.path)
        let error = try Self.extractContained(scratch.at("nonUTF8Name.tar"), scratch)
        guard case .unsupported(_, _, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(detail.hasPrefix("the name is not UTF-8"))
    }
}
