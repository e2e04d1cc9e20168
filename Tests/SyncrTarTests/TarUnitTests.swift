import Foundation
import Testing
@testable import SyncrArchive

/// strip_components against GNU tar, the format sniffer, and the header field parsers.
@Suite(.timeLimit(.minutes(10))) struct TarUnitTests {
    @Test("strip_components works like tar --strip-components, with and without ./ names",
          arguments: [(".", 1), (".", 2), ("top", 1), ("top", 2), ("top", 3)])
    func stripComponents(root: String, count: Int) throws {
        let scratch = try Scratch()
        try TarInteropTests.makeTree(in: scratch, longNames: true)
        let archive = scratch.at("stripComponents.tar")
        // `.` archives names as ./top/...; `top` as top/...
        let member = root == "." ? "./top" : "top"
        try run("tar", ["-cf", archive, "-C", scratch.at("src"), member])
        if root == "top" && count == 2 {
            // top/bin/hello-link -> ../hello.txt becomes hello-link -> ../hello.txt, which
            // points out of the destination: GNU tar makes it anyway, syncr refuses.
            let error = #expect(throws: ArchiveError.self) {
                try TarExtractor.extract(archive: archive, into: try scratch.folder("refused"), options: .init(stripComponents: 2))
            }
            #expect(error == .unsafePath(archive: "stripComponents.tar", entry: "top/bin/hello-link",
                                         detail: "the link points outside the destination (../hello.txt)"))
            try run("tar", ["--delete", "-f", archive, "top/bin/hello-link"])
        }
        let summary = try TarInteropTests.compareWithGNUTar(archive, in: scratch, options: .init(stripComponents: count),
                                                           tarArguments: ["--strip-components=\(count)"])
        // What strip_components removed entirely is listed.
        #expect(summary.skipped.isEmpty == (root == "." && count == 1))
    }

    @Test("sniff tells zip, gzip and tar from their first bytes")
    func sniffMagic() throws {
        #expect(ArchiveFormat.sniff([0x50, 0x4B, 0x03, 0x04, 0x14]) == .zip)
        #expect(ArchiveFormat.sniff([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)) == .zip)
        #expect(ArchiveFormat.sniff([0x1F, 0x8B, 0x08]) == .gzip)
        var ustar = [UInt8](repeating: 0, count: 512)
        ustar.replaceSubrange(257..<263, with: Array("ustar\0".utf8))
        #expect(ArchiveFormat.sniff(ustar) == .tar)
        ustar.replaceSubrange(257..<265, with: Array("ustar  \0".utf8))
        #expect(ArchiveFormat.sniff(ustar) == .tar)
        #expect(ArchiveFormat.sniff(ustar.prefix(262)) == nil)
        #expect(ArchiveFormat.sniff([UInt8](repeating: 0, count: 10240)) == nil)
        #expect(ArchiveFormat.sniff(Array("PK".utf8)) == nil)
        #expect(ArchiveFormat.sniff([]) == nil)

        // And from real files.
        let scratch = try Scratch()
        try run("sh", ["-c", "echo hi > a && tar cf a.tar a && tar czf a.tgz a && python3 -m zipfile -c a.zip a"], cwd: scratch.path)
        for (name, format) in [("a.tar", ArchiveFormat.tar), ("a.tgz", .gzip), ("a.zip", .zip)] {
            #expect(ArchiveFormat.sniff(try bytes(of: scratch.at(name)).prefix(512)) == format)
        }
    }

    @Test("The extension names the format", arguments: [
        ("release.zip", ArchiveFormat.zip), ("Release.ZIP", .zip), ("a.tar", .tar), ("a.tar.gz", .gzip),
        ("a.TGZ", .gzip), ("notes.gz", nil), ("a.tar.bz2", nil), ("tar", nil), ("a.tar.gz.sig", nil),
    ] as [(String, ArchiveFormat?)])
    func formatFromExtension(name: String, format: ArchiveFormat?) {
        #expect(ArchiveFormat.fromExtension(name) == format)
    }

    @Test("Numeric fields: octal with spaces and NULs, GNU base-256 positive and negative")
    func numericFields() {
        func number(_ bytes: [UInt8]) -> Int64? {
            bytes.withUnsafeBytes { TarHeader.number($0, 0, bytes.count) }
        }
        #expect(number(Array("0000644\0".utf8)) == 0o644)
        #expect(number(Array("   644 \0".utf8)) == 0o644)
        #expect(number(Array("00000000017\0".utf8)) == 15)
        #expect(number(Array("77777777777 ".utf8)) == 0o77777777777)
        #expect(number([UInt8](repeating: 0, count: 8)) == 0)
        #expect(number(Array("        ".utf8)) == 0)
        #expect(number(Array("0000a44\0".utf8)) == nil)
        #expect(number(Array("12345678".utf8)) == nil)
        // Base-256: 0x80 then big-endian; 0xff marks a negative two's complement number.
        #expect(number([0x80, 0, 0, 0, 0, 0, 0x01, 0x00]) == 256)
        #expect(number([0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0]) == 1 << 33)
        #expect(number([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC, 0x18]) == -1000)
        #expect(number([0x80, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0]) == nil, "does not fit in 64 bits")
        #expect(number([0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == Int64.max)
    }

    @Test("pax records: lengths count themselves, values may hold = and newlines, empty values unset")
    func paxRecords() throws {
        // "24 path=" is 8 bytes, the value 15 (ü and ï take 2 each), the newline 1.
        let text = "24 path=ünï/a=b\nc.txt\n"
        #expect(text.utf8.count == 24)
        let records = try PaxRecords.parse(Array((text + "8 size=\n11 mtime=5\n").utf8) + [0, 0, 0])
        #expect(records["path"] == Array("ünï/a=b\nc.txt".utf8))
        #expect(records["size"] == nil)
        #expect(records.values["size"] == [])
        #expect(records["mtime"] == Array("5".utf8))
        #expect(throws: PaxRecords.Problem.self) { try PaxRecords.parse(Array("99 path=x\n".utf8)) }
        #expect(throws: PaxRecords.Problem.self) { try PaxRecords.parse(Array("10 path=xy".utf8)) }
        #expect(throws: PaxRecords.Problem.self) { try PaxRecords.parse(Array("9 pathx\n".utf8)) }
        #expect(throws: PaxRecords.Problem.self) { try PaxRecords.parse(Array("x path=x\n".utf8)) }
        #expect(PaxRecords.time(Array("1700000000.75".utf8)) == 1_700_000_000)
        #expect(PaxRecords.time(Array("-1.5".utf8)) == -2)
        #expect(PaxRecords.time(Array("-2".utf8)) == -2)
        #expect(PaxRecords.time(Array("1e9".utf8)) == nil)
    }

    @Test("Link targets: leading .. may climb, .. after a name may not (a link could sit there)")
    func linkTargets() {
        #expect(SafePath.linkStaysInside(linkComponents: ["a", "b", "l"], target: "../../x"))
        #expect(SafePath.linkStaysInside(linkComponents: ["a", "l"], target: "./../x/y"))
        #expect(!SafePath.linkStaysInside(linkComponents: ["a", "l"], target: "../../x"))
        #expect(!SafePath.linkStaysInside(linkComponents: ["a", "l"], target: "b/../x"))
        #expect(!SafePath.linkStaysInside(linkComponents: ["l"], target: "/etc"))
        // Each refusal says what is true of the target: an absolute link is not said to
        // point outside, as it may name a file of the folder.
        #expect(SafePath.linkProblem(linkComponents: ["a", "l"], target: "../../x") == .climbsOut)
        #expect(SafePath.linkProblem(linkComponents: ["a", "l"], target: "b/../x") == .climbsAfterName)
        #expect(SafePath.linkProblem(linkComponents: ["l"], target: "/etc") == .absolute)
        #expect(SafePath.linkProblem(linkComponents: ["l"], target: "") == .empty)
        #expect(SafePath.linkProblem(linkComponents: ["l"], target: "a\\b") == .backslash)
        #expect(SafePath.linkProblem(linkComponents: ["a", "l"], target: "../x") == nil)
    }
}
