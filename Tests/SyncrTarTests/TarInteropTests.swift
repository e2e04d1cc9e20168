import Foundation
import Testing
@testable import SyncrArchive

/// Archives written by GNU tar, Python's tarfile and git unpack exactly as `tar xf` unpacks them.
@Suite(.timeLimit(.minutes(10))) struct TarInteropTests {
    /// A long folder chain: a path over 100 bytes made of short components, so ustar can split
    /// it into `prefix` and `name`.
    static let deepPath = "deep-folder-one/deep-folder-two/deep-folder-three/deep-folder-four/deep-folder-five"

    /// The tree every interop test archives, under `<scratch>/src/top`: a file with a set mtime,
    /// an executable, symbolic links inside, a hard link, an empty folder, UTF-8 names, a
    /// binary file larger than one read buffer, a path over 100 bytes and (`longNames`) a name
    /// component over 100 bytes and a link target over 100 bytes, which ustar cannot hold.
    static func makeTree(in scratch: Scratch, longNames: Bool) throws {
        var script = """
        set -e
        mkdir -p src/top/bin src/top/empty "src/top/ünïcødé 目录" src/top/\(deepPath)
        printf 'hello\\n' > src/top/hello.txt
        touch -d @1600000000 src/top/hello.txt
        printf '#!/bin/sh\\necho hi\\n' > src/top/bin/run.sh
        chmod 755 src/top/bin/run.sh
        ln -s ../hello.txt src/top/bin/hello-link
        ln -s bin src/top/bin-link
        ln src/top/hello.txt src/top/hard.txt
        printf 'ö\\n' > "src/top/ünïcødé 目录/naïve 文件 😀.txt"
        head -c 300000 /dev/urandom > src/top/random.bin
        : > src/top/empty-file
        printf 'deep\\n' > src/top/\(deepPath)/file-at-the-bottom.txt
        """
        if longNames {
            script += """

            printf 'long\\n' > src/top/\(String(repeating: "n", count: 150)).txt
            ln -s \(deepPath)/file-at-the-bottom.txt src/top/long-target-link
            """
        }
        try run("sh", ["-c", script], cwd: scratch.path)
    }

    /// `tar xf` into `expected`, syncr into `staging`; the trees must match.
    static func compareWithGNUTar(_ archive: String, in scratch: Scratch, options: TarExtractionOptions = .init(),
                                  tarArguments: [String] = []) throws -> TarExtractionSummary {
        let expected = try scratch.folder("expected")
        let staging = try scratch.folder("staging")
        try run("tar", ["-xf", archive, "-C", expected] + tarArguments)
        let summary = try TarExtractor.extract(archive: archive, into: staging, options: options)
        let want = try Tree(expected), got = try Tree(staging)
        #expect(!want.nodes.isEmpty)
        #expect(got == want, "syncr:\n\(got)\n\ntar xf:\n\(want)")
        return summary
    }

    static let gnuFormats: [(format: String?, gzip: Bool)] = [
        (nil, false), (nil, true), ("ustar", false), ("ustar", true),
        ("pax", false), ("pax", true), ("gnu", false), ("gnu", true),
    ]

    @Test("GNU tar archives unpack as tar xf unpacks them", arguments: gnuFormats)
    func gnuTarFormats(format: String?, gzip: Bool) throws {
        let scratch = try Scratch()
        try Self.makeTree(in: scratch, longNames: format != "ustar")
        let archive = scratch.at("gnuTarFormats-\(format ?? "default").tar\(gzip ? ".gz" : "")")
        try run("tar", (format.map { ["--format=\($0)"] } ?? []) + [gzip ? "-czf" : "-cf", archive, "-C", scratch.at("src"), "top"])
        let summary = try Self.compareWithGNUTar(archive, in: scratch)
        #expect(summary.compressed == gzip)
        #expect(summary.hardLinks == 1)
        #expect(summary.symbolicLinks == (format == "ustar" ? 2 : 3))
        #expect(summary.files == (format == "ustar" ? 6 : 7))
        // random.bin, hello.txt, run.sh, the UTF-8 file, the deep file (hard links add nothing).
        #expect(summary.bytes == 300_000 + 6 + 18 + 3 + 5 + (format == "ustar" ? 0 : 5))
        #expect(summary.skipped.isEmpty && summary.notes.isEmpty)
        // The mtime and the exec bit came through (also compared with tar's, but say it plainly).
        var st = stat()
        #expect(lstat(scratch.at("staging/top/hello.txt"), &st) == 0 && st.st_mtim.tv_sec == 1_600_000_000)
        #expect(lstat(scratch.at("staging/top/bin/run.sh"), &st) == 0 && st.st_mode & 0o111 == 0o111)
    }

    @Test("An archive of ./ (tar -C dir .) unpacks with its root entry skipped")
    func dotRootArchive() throws {
        let scratch = try Scratch()
        try Self.makeTree(in: scratch, longNames: true)
        let archive = scratch.at("dotRootArchive.tar.gz")
        try run("tar", ["-czf", archive, "-C", scratch.at("src/top"), "."])
        let summary = try Self.compareWithGNUTar(archive, in: scratch)
        #expect(summary.skipped == ["./"])
    }

    @Test("Python's tarfile: pax with UTF-8 names, long names and a pax mtime")
    func pythonPaxUnicode() throws {
        let scratch = try Scratch()
        let archive = scratch.at("pythonPaxUnicode.tar")
        try python("""
        with tarfile.open("pythonPaxUnicode.tar", "w", format=tarfile.PAX_FORMAT) as t:
            add(t, "ünïcødé/", tarfile.DIRTYPE, mode=0o755)
            add(t, "ünïcødé/日本語のファイル名.txt", data="内容\\n".encode())
            add(t, "ünïcødé/" + "é" * 120 + ".txt", data=b"long\\n", mtime=1_234_567_890)
            add(t, "ünïcødé/link", tarfile.SYMTYPE, linkname="日本語のファイル名.txt")
            add(t, "ünïcødé/hard", tarfile.LNKTYPE, linkname="ünïcødé/日本語のファイル名.txt")
            add(t, "run.sh", data=b"#!/bin/sh\\n", mode=0o755)
        """, cwd: scratch.path)
        let summary = try Self.compareWithGNUTar(archive, in: scratch)
        #expect(summary.entries == 6)

        let collector = EntryCollector()
        try TarReader.read(file: archive, handler: collector)
        let long = try #require(collector.entries.first { $0.name.hasSuffix("é.txt") })
        #expect(long.name == "ünïcødé/" + String(repeating: "é", count: 120) + ".txt")
        #expect(long.modificationTime == 1_234_567_890)
        #expect(collector.entries.map(\.name).contains("ünïcødé/日本語のファイル名.txt"))
    }

    @Test("Python's tarfile: GNU base-256 numbers for a large uid, gid and a negative mtime")
    func pythonBase256Numbers() throws {
        let scratch = try Scratch()
        let archive = scratch.at("pythonBase256Numbers.tar")
        // 0o7777777 is the largest uid an 8-byte octal field holds; beyond it GNU format
        // switches to base-256. A negative mtime is base-256 too.
        try python("""
        with tarfile.open("pythonBase256Numbers.tar", "w", format=tarfile.GNU_FORMAT) as t:
            add(t, "big-ids.txt", data=b"ids\\n", uid=0o7777777 + 12345, gid=3_000_000_000)
            add(t, "old.txt", data=b"old\\n", mtime=-1000)
            add(t, "future.txt", data=b"future\\n", mtime=0o77777777777 + 10)
        """, cwd: scratch.path)
        // The fields really are base-256.
        let raw = try bytes(of: archive)
        #expect(raw[108] == 0x80 && raw[116] == 0x80)

        let collector = EntryCollector()
        try TarReader.read(file: archive, handler: collector)
        #expect(collector.entries.map(\.userID) == [0o7777777 + 12345, 0, 0])
        #expect(collector.entries.map(\.groupID) == [3_000_000_000, 0, 0])
        #expect(collector.entries.map(\.modificationTime) == [1_700_000_000, -1000, 0o77777777777 + 10])
        _ = try Self.compareWithGNUTar(archive, in: scratch)
    }

    @Test("Signed header checksums (old Sun and GNU tars) are accepted, as GNU tar accepts them")
    func signedChecksum() throws {
        let scratch = try Scratch()
        let archive = scratch.at("signedChecksum.tar")
        // A name with bytes >= 0x80 makes the signed and unsigned sums differ; store the signed one.
        try python("""
        with tarfile.open("signedChecksum.tar", "w", format=tarfile.USTAR_FORMAT) as t:
            add(t, "ßéè.txt", data=b"signed\\n")
        raw = bytearray(open("signedChecksum.tar", "rb").read())
        header = raw[:512]
        header[148:156] = b" " * 8
        signed = sum(b - 256 if b >= 128 else b for b in header)
        raw[148:156] = b"%06o\\0 " % signed
        open("signedChecksum.tar", "wb").write(raw)
        """, cwd: scratch.path)
        let staging = try scratch.folder("staging")
        try TarExtractor.extract(archive: archive, into: staging)
        #expect(try bytes(of: staging + "/ßéè.txt") == Array("signed\n".utf8))
    }

    @Test("A gzip stream of two concatenated members reads as one tar")
    func concatenatedGzipMembers() throws {
        let scratch = try Scratch()
        try Self.makeTree(in: scratch, longNames: true)
        let archive = scratch.at("concatenatedGzipMembers.tar.gz")
        try run("sh", ["-c", """
            set -e
            tar -cf whole.tar -C src top
            size=$(stat -c %s whole.tar)
            head -c $((size / 2 + 100)) whole.tar | gzip -c > concatenatedGzipMembers.tar.gz
            tail -c +$((size / 2 + 101)) whole.tar | gzip -c >> concatenatedGzipMembers.tar.gz
            """], cwd: scratch.path)
        _ = try Self.compareWithGNUTar(archive, in: scratch)
        let result = try TarReader.read(file: archive, handler: EntryCollector())
        #expect(result.gzipMembers == 2)
    }

    @Test("Bytes after the end of the archive are ignored, in a plain tar and after a tar.gz")
    func trailingGarbage() throws {
        let scratch = try Scratch()
        try Self.makeTree(in: scratch, longNames: false)
        try run("sh", ["-c", """
            set -e
            tar -cf trailingGarbage.tar -C src top
            tar -czf trailingGarbage.tar.gz -C src top
            head -c 5000 /dev/urandom | tee -a trailingGarbage.tar >> trailingGarbage.tar.gz
            """], cwd: scratch.path)
        for name in ["trailingGarbage.tar", "trailingGarbage.tar.gz"] {
            let staging = try scratch.folder("staging-\(name)")
            let summary = try TarExtractor.extract(archive: scratch.at(name), into: staging)
            #expect(summary.files == 6)
        }
    }

    @Test("git archive's global pax header (the commit id as a comment) is read without a note")
    func gitArchiveGlobalHeader() throws {
        let scratch = try Scratch()
        try run("sh", ["-c", """
            set -e
            git init -q repo && cd repo
            printf 'readme\\n' > README.md && mkdir src && printf 'int main;\\n' > src/main.c
            git add . && git -c user.name=t -c user.email=t@t commit -qm init
            git archive --format=tar.gz --prefix=project-1.0/ -o ../gitArchiveGlobalHeader.tar.gz HEAD
            """], cwd: scratch.path)
        let summary = try Self.compareWithGNUTar(scratch.at("gitArchiveGlobalHeader.tar.gz"), in: scratch,
                                                 options: .init(stripComponents: 1), tarArguments: ["--strip-components=1"])
        #expect(summary.notes.isEmpty)
        #expect(summary.files == 2)
    }

    @Test("A pax global header's mtime applies to later entries; its path is ignored with a note")
    func paxGlobalHeader() throws {
        let scratch = try Scratch()
        let archive = scratch.at("paxGlobalHeader.tar")
        try python("""
        with tarfile.open("paxGlobalHeader.tar", "w", format=tarfile.PAX_FORMAT,
                          pax_headers={"mtime": "1500000000.5", "path": "everything", "comment": "release"}) as t:
            add(t, "a.txt", data=b"a\\n")
        """, cwd: scratch.path)
        let collector = EntryCollector()
        let result = try TarReader.read(file: archive, handler: collector)
        #expect(collector.entries.map(\.name) == ["a.txt"])
        #expect(collector.entries.first?.modificationTime == 1_500_000_000)
        #expect(result.notes == ["a pax global header's path is ignored: it would apply to every entry"])
    }
}
