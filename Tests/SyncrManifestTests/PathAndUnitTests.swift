import Foundation
import Testing
@testable import SyncrManifest

@Suite(.timeLimit(.minutes(10))) struct DestinationTests {
    func destination(_ to: String, allowOutside: Bool = false) -> String {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: '\(to)'
                allow_outside: \(allowOutside)
            """
        do {
            return try parse(yaml).downloads[0].destination
        } catch {
            return error.diagnostics.map(\.message).joined(separator: "\n")
        }
    }

    @Test(arguments: [
        ("a", "/work/proj/a"),
        ("a/./b", "/work/proj/a/b"),
        ("a//b", "/work/proj/a/b"),
        ("./a/b/../c", "/work/proj/a/c"),
        ("../proj/x", "/work/proj/x"),  // leaves and comes back: inside after normalization
    ])
    func inside(to: String, expected: String) {
        #expect(destination(to) == expected)
    }

    @Test(arguments: [
        ("../x", #""../x" is outside the manifest's folder; set allow_outside: true on this entry if that is intended"#),
        ("a/../../x", #""a/../../x" is outside the manifest's folder; set allow_outside: true on this entry if that is intended"#),
        ("../projx/a", #""../projx/a" is outside the manifest's folder; set allow_outside: true on this entry if that is intended"#),
        ("/abs", #""/abs" is outside the manifest's folder; set allow_outside: true on this entry if that is intended"#),
        ("/work/proj/a", #""/work/proj/a" is an absolute path; write it relative to the manifest's folder, or set allow_outside: true on this entry if that is intended"#),
        ("a/", #""a/" names a folder; give a file path (or set unzip: true to unpack into it)"#),
        (".", #""." names a folder; give a file path"#),
        ("a/..", #""a/.." names a folder; give a file path"#),
        ("", "expected a file path, found an empty string"),
    ])
    func refused(to: String, message: String) {
        #expect(destination(to) == message)
    }

    @Test(arguments: [
        ("/abs/file", "/abs/file"),
        ("../x", "/work/x"),
        ("/a/../b", "/b"),
    ])
    func allowOutside(to: String, expected: String) {
        #expect(destination(to, allowOutside: true) == expected)
    }

    @Test func allowOutsideStillNeedsAFile() {
        #expect(destination("/", allowOutside: true) == #""/" names a folder; give a file path"#)
    }

    @Test func nulRefused() {
        let yaml = "version: 1\ndownloads: [{url: 'https://h/', to: \"a\\0b\"}]\n"
        #expect(errors(yaml).contains("downloads[0].to: a path cannot contain a NUL byte"))
    }

    @Test func sameDestinationAfterNormalization() {
        let yaml = """
            version: 1
            downloads:
              - { url: "https://h/1", to: x/y }
              - { url: "https://h/2", to: z }
              - { url: "https://h/3", to: ./z/../x//y }
              - { url: "https://h/4", to: x }
            """
        #expect(errors(yaml) == """
            syncr.yml:5:31: error: downloads[2].to: same destination as downloads[0] (line 3)
              - { url: "https://h/3", to: ./z/../x//y }
                                          ^
            syncr.yml:6:31: error: downloads[3].to: "x" is a folder that downloads[0] (line 3) writes into; a path cannot be both a file and a folder
              - { url: "https://h/4", to: x }
                                          ^
            """)
    }

    /// Two destinations that a link in an existing folder makes one (`alias -> real`) are
    /// refused as two spellings are, saying so: written differently they passed, and each run
    /// wrote the file over with the other entry's bytes (two unpacked folders raced).
    @Test func destinationsThatALinkMakesOneAreRefused() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("linked-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: root + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createSymbolicLink(atPath: root + "/alias", withDestinationPath: "real")
        let yaml = """
            version: 1
            downloads:
              - { url: "https://h/1", to: real/a.bin }
              - { url: "https://h/2", to: alias/a.bin }
              - { url: "https://h/3", to: real/pkg, unzip: true }
              - { url: "https://h/4", to: alias/pkg/new/b.bin }
              - { url: "https://h/5", to: alias/other.bin }
            """
        let text: String
        do {
            _ = try ManifestLoader.parse(text: yaml, path: "syncr.yml", directory: root, environment: [:])
            text = "OK"
        } catch {
            text = error.description
        }
        let real = try #require(realpath(root, nil).map { p in defer { free(p) }; return String(cString: p) })
        #expect(text.contains("downloads[1].to: same destination as downloads[0] (line 3) (through a symbolic link: "
            + "\"alias/a.bin\" is \(real)/real/a.bin)"), "\(text)")
        #expect(text.contains("downloads[3].to: \"alias/pkg/new/b.bin\" is inside the folder that downloads[2] (line 5) "
            + "unpacks, replacing the folder as a whole; write it somewhere else (through a symbolic link: "
            + "\"alias/pkg/new/b.bin\" is \(real)/real/pkg/new/b.bin)"), "\(text)")
        #expect(!text.contains("downloads[4]"), "a file of its own beside them is fine: \(text)")
    }

    /// Two spellings of one name ("é" composed, and "e" with a combining accent) are two files
    /// on Linux, but one key to syncr: refused, saying why (it said "same destination").
    @Test func namesThatDifferOnlyInCompositionAreRefusedSayingSo() {
        let yaml = "version: 1\ndownloads:\n  - { url: \"https://h/1\", to: \"caf\u{65}\u{301}\" }\n"
            + "  - { url: \"https://h/2\", to: \"caf\u{e9}\" }\n"
        #expect(errors(yaml).contains("downloads[1].to: \"caf\u{e9}\" differs from the to: of downloads[0] (line 3) only in how its accented characters are composed"),
                "\(errors(yaml))")
    }

    /// The same where one of the two is a folder of the other entry: the message names the
    /// folder (it named the other's to:, which is another path).
    @Test func aFileAndAFolderThatDifferOnlyInCompositionAreRefusedSayingSo() {
        let decomposed = "caf\u{65}\u{301}", composed = "caf\u{e9}"
        let fileAfterFolder = "version: 1\ndownloads:\n  - { url: \"https://h/1\", to: \"\(decomposed)/x\" }\n"
            + "  - { url: \"https://h/2\", to: \"\(composed)\" }\n"
        #expect(errors(fileAfterFolder).contains("downloads[1].to: \"\(composed)\" differs from a folder that downloads[0] (line 3) writes into only in how its accented characters are composed"),
                "\(errors(fileAfterFolder))")
        let folderAfterFile = "version: 1\ndownloads:\n  - { url: \"https://h/1\", to: \"\(decomposed)\" }\n"
            + "  - { url: \"https://h/2\", to: \"\(composed)/x\" }\n"
        #expect(errors(folderAfterFile).contains("downloads[1].to: \"\(composed)/x\" is in a folder whose name differs from the to: of downloads[0] (line 3) only in how its accented characters are composed"),
                "\(errors(folderAfterFile))")
    }

    @Test func lexicalContainmentIsByComponent() {
        #expect(!LexicalPath.isStrictlyInside("/a/bc", folder: "/a/b"))
        #expect(LexicalPath.isStrictlyInside("/a/b/c", folder: "/a/b"))
        #expect(!LexicalPath.isStrictlyInside("/a/b", folder: "/a/b"))
        #expect(LexicalPath.resolve("//..//x", against: "/a") == "/x")
        #expect(LexicalPath.parent(of: "syncr.yml") == ".")
        #expect(LexicalPath.parent(of: "/syncr.yml") == "/")
        #expect(LexicalPath.parent(of: "conf/syncr.yml") == "conf")
        // The system splits at the byte: a combining mark after the slash does not hide it (as
        // one Character, "/\u{301}" is not "/").
        #expect(LexicalPath.parent(of: "conf/\u{301}syncr.yml") == "conf")
        #expect(LexicalPath.parent(of: "dé/jà/vu") == "dé/jà")
    }

    /// The byte comparison for normalized paths agrees with the component one, including the
    /// root, a sibling that shares a prefix, the folder itself, and names beyond ASCII.
    @Test func normalizedContainmentAgreesWithComponents() {
        let folders = ["/", "/a", "/a/b", "/é", "/a/é"]
        let paths = ["/", "/a", "/ab", "/a/b", "/a/bc", "/a/b/c", "/é", "/é/x", "/éx", "/a/é/ü", "/b"]
        for folder in folders {
            for path in paths {
                #expect(LexicalPath.isStrictlyInside(normalized: path, folder: folder)
                        == LexicalPath.isStrictlyInside(path, folder: folder), "\(path) in \(folder)")
            }
        }
        #expect(LexicalPath.components(ofAbsolute: "/a/./b/../c//d/.../é") == ["a", "c", "d", "...", "é"])
        #expect(LexicalPath.components(ofAbsolute: "/../..") == [])
    }
}

@Suite(.timeLimit(.minutes(10))) struct ByteSizeTests {
    @Test(arguments: [
        ("0", 0), ("512", 512), ("512B", 512), ("64KiB", 65_536), ("64 KiB", 65_536),
        ("8MiB", 8_388_608), ("1GiB", 1_073_741_824), ("1TiB", 1_099_511_627_776),
        ("8M", 8_388_608), ("4k", 4_096), ("1G", 1_073_741_824),
        ("10KB", 10_000), ("10MB", 10_000_000), ("2GB", 2_000_000_000), ("64kib", 65_536),
        ("1.5KiB", 1_536), ("1.5 KiB", 1_536), ("0.1KiB", 102), ("8.0 MiB", 8_388_608),
    ] as [(String, Int64)])
    func parses(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "KiB", "-1", "1.KiB", ".5KiB", "1 2", "1XB", "1 KiB ", " 1",
                      "99999999999999999999", "9000000TiB", "1,5MiB", "1e3"])
    func refuses(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    /// The edges syncr-manifest(5) and the README document: which unit is a power of 1000 and
    /// which of 1024, that case does not matter, and how a fraction rounds (down, to bytes).
    @Test(arguments: [
        ("1KB", 1_000), ("1MB", 1_000_000), ("1GB", 1_000_000_000), ("1TB", 1_000_000_000_000),
        ("1KiB", 1_024), ("1MiB", 1_048_576), ("1GiB", 1_073_741_824), ("1TiB", 1_099_511_627_776),
        ("1K", 1_024), ("1T", 1_099_511_627_776), ("1mb", 1_000_000), ("1Mb", 1_000_000), ("1mib", 1_048_576),
        ("1.5MB", 1_500_000), ("0.5GB", 500_000_000), ("1.9", 1), ("0.5", 0), ("0.5B", 0),
        ("0.1KiB", 102), ("0.999KB", 999), ("0.9999KB", 999), ("1.999999999999999999KiB", 2_047),
        ("0.000000000000000001TiB", 0), ("8 MiB", 8_388_608),
    ] as [(String, Int64)])
    func documentedUnitsAndRounding(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    /// A fraction of 19 digits, an exponent, a sign, two spaces and units above T are refused.
    @Test(arguments: ["1.0000000000000000001KiB", "1e3", "+1KiB", "1  KiB", "1PiB", "1PB", "9EiB",
                      "9223372036854775808"])
    func documentedRefusals(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    /// The largest size is Int64's: 8 EiB less one byte, written in bytes.
    @Test func theLargestSizeIsInt64Max() {
        #expect(ByteSize.parse("9223372036854775807") == Int64.max)
    }

    @Test(arguments: [
        ("10KiB/s", 10_240), ("10KiB/S", 10_240), ("10 KiB/s", 10_240), ("512/s", 512), ("10KiB", 10_240),
        ("1.5MB/s", 1_500_000),
    ] as [(String, Int64)])
    func parsesRates(text: String, bytes: Int64) {
        #expect(ByteSize.parseRate(text) == bytes)
    }

    @Test(arguments: ["/s", "10KiB/s/s", "10KiB /s", "10KiB/sec", "10KiB/m", "s", "10KiBs"])
    func refusesRates(text: String) {
        #expect(ByteSize.parseRate(text) == nil)
    }

    @Test func aSizeRefusesPerSecond() {
        #expect(ByteSize.parse("10KiB/s") == nil)
    }

    @Test(arguments: [
        (0, "0 B"), (512, "512 B"), (1_023, "1023 B"), (1_024, "1.0 KiB"), (1_536, "1.5 KiB"),
        (8_388_608, "8.0 MiB"), (1_073_741_824, "1.0 GiB"), (1_048_575, "1.0 MiB"),
        (1_048_524, "1023.9 KiB"), (-2_048, "-2.0 KiB"), (Int64.max, "8.0 EiB"),
    ] as [(Int64, String)])
    func formats(bytes: Int64, text: String) {
        #expect(ByteSize.format(bytes) == text)
    }
}

@Suite(.timeLimit(.minutes(10))) struct DurationTextTests {
    @Test(arguments: [
        ("500ms", 500), ("30s", 30_000), ("5m", 300_000), ("1h", 3_600_000),
        ("1m30s", 90_000), ("1h30m", 5_400_000), ("2s500ms", 2_500), ("1.5s", 1_500),
        ("0s", 0), ("1h2m3s4ms", 3_723_004),
    ])
    func parses(text: String, ms: Int) {
        #expect(DurationText.parse(text) == ms)
    }

    @Test(arguments: ["", "30", "s", "1x", "30s1m", "1s1s", "-5s", "1 s", "1.s", "99999999999999999999h",
                      "5min", "1.5"])
    func refuses(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test(arguments: [
        (0, "0s"), (500, "500ms"), (30_000, "30s"), (90_000, "1m30s"), (3_600_000, "1h"),
        (2_500, "2s500ms"), (3_723_004, "1h2m3s4ms"),
    ])
    func formatsAndRoundTrips(ms: Int, text: String) {
        #expect(DurationText.format(milliseconds: ms) == text)
        #expect(DurationText.parse(text) == ms)
    }
}

/// A number too large to count is well formed: the message gives the range, not "expected an
/// integer" (which `99999999999999999999` is).
@Suite(.timeLimit(.minutes(5))) struct TooLargeNumberTests {
    @Test func tooLargeNumbersAreToldByTheirRange() {
        let text = errors("""
            version: 1
            defaults:
              max_connections_per_host: 99999999999999999999
              low_speed: 9999999999999999999999
              timeout: 99999999999999999999h
              min_split: 99999999999999999999KiB
            """)
        #expect(text.contains("defaults.max_connections_per_host: expected an integer from 1 to"), "\(text)")
        #expect(text.contains("defaults.low_speed: expected a rate from"), "\(text)")
        #expect(text.contains("defaults.timeout: \"99999999999999999999h\" is longer than syncr can count"), "\(text)")
        #expect(text.contains("defaults.min_split: expected a size from"), "\(text)")
        #expect(errors("version: 1\ndefaults: { retries: 3x }\n").contains("expected an integer, found"))
    }
}

/// A refused URL says what is wrong with it (every one said only "expected an http(s) URL").
@Suite(.timeLimit(.minutes(5))) struct URLProblemTests {
    @Test(arguments: [
        ("http://example.com/my file.bin", "a URL cannot contain a space; write each as %20"),
        ("http://example.com:99999/x", "its port must be a number from 0 to 65535"),
        ("example.com/x", "it has no scheme; write http://, https:// or s3:// in front"),
        ("http:/example.com/x", "expected // after http:"),
        ("https:///x", "it has no host"),
        ("http://[::1/x", "its IPv6 address has no closing ]"),
        ("localhost:8080/file.bin", "it has no scheme; write http://, https:// or s3:// in front"),
        ("http://[]/x", "it has no host (empty brackets)"),
        ("http://[::1]x/", "only a :port may follow the ] of an IPv6 address"),
    ])
    func theReasonIsGiven(url: String, reason: String) {
        let text = errors("version: 1\ndownloads:\n  - { url: \"\(url)\", to: a }\n")
        #expect(text.contains("found \"\(url)\": \(reason)"), "\(text)")
    }

    /// A variable that expands to a URL of another scheme is said to be the cause, without its value.
    @Test func anExpandedURLIsExplainedWithoutItsValue() {
        let text = errors("version: 1\ndownloads:\n  - { url: \"${URLVAR}\", to: a }\n", environment: ["URLVAR": "ftp://secret.example/x"])
        #expect(text.contains("once its ${...} references are expanded: its scheme is not http, https or s3"), "\(text)")
        #expect(!text.contains("secret.example"))
    }
}

/// Header names ignore case, also where a mapping merges headers in (`<<: *h`): one written
/// there replaces the merged one however it is spelled (it was called a duplicate).
@Suite(.timeLimit(.minutes(5))) struct MergedHeaderCaseTests {
    @Test func aWrittenHeaderReplacesAMergedOneOfAnotherCase() throws {
        let manifest = try parse("""
            version: 1
            x-h: &h { Authorization: "Bearer abc", X-A: "1" }
            downloads:
              - url: http://example.com/b
                to: b
                headers: { <<: *h, x-a: "3" }
            """)
        let headers = manifest.downloads[0].settings.headers
        #expect(headers.map(\.name) == ["x-a", "Authorization"])
        #expect(headers.first { $0.name == "x-a" }?.value.written == "3")
    }
}

/// Line breaks as libyaml counts them: messages quote the line its marks point at.
@Suite(.timeLimit(.minutes(5))) struct LineBreakTests {
    /// Old Mac endings (CR alone): the message quotes the line and points at the value.
    @Test func carriageReturnEndings() {
        let text = errors("version: 1\rdownloads:\r  - { url: \"https://h/a\", to: a, retries: x }\r")
        #expect(text.contains("syncr.yml:3:43: error: downloads[0].retries"), "\(text)")
        #expect(text.contains("\n  - { url: \"https://h/a\", to: a, retries: x }\n"), "\(text)")
    }

    /// A U+2028 pasted into a comment ends the line for YAML: the error is on the right line,
    /// and the hint names the character.
    @Test func aLineSeparatorInACommentIsNamed() {
        let text = errors("version: 1 # pasted\u{2028}comment\ndownloads: []\n")
        #expect(text.contains("line 1 ends in a U+2028 (line separator)"), "\(text)")
        #expect(ManifestDecoder.lineStarts(of: Array("a\u{2028}b\r\nc\rd\u{85}e\n".utf8)) == [0, 4, 7, 9, 12, 14])
    }
}

/// YAML indents with spaces only; a tab in the indentation is named, wherever on the line
/// libyaml stopped.
@Suite(.timeLimit(.minutes(5))) struct TabIndentationTests {
    @Test(arguments: [("version: 1\ndownloads:\n\t- { url: \"https://h/a\", to: a }\n", "syncr.yml:3:1: error"),
                      ("version: 1\ndownloads:\n  - url: \"https://h/a\"\n  \tto: a\n", "syncr.yml:4:3: error"),
                      ("version: 1\ndownloads:\n  - url: \"https://h/a\"\n\t  to: a\n", "syncr.yml:4:1: error")])
    func aTabInTheIndentationIsNamed(manifest: String, position: String) {
        let text = errors(manifest)
        #expect(text.contains(position), "\(text)")
        let line = position.split(separator: ":")[1]
        #expect(text.contains("hint: line \(line) is indented with a tab, and YAML indents with spaces only; replace the tab with spaces"),
                "\(text)")
    }

    /// A tab inside a value is no indentation, and another error on a line indented with tabs
    /// (where a flow list allows them) is not blamed on the tab.
    @Test(arguments: ["version: 1\ndownloads:\n  - { url: \"https://h/a\", to: \"a\tb\", retries: [ }\n",
                      "version: 1\ndownloads: [\n\t{ url: \"https://h/a\", to: a }\n\t{ url: \"https://h/b\", to: b } ]\n"])
    func anotherErrorIsNotBlamedOnATab(manifest: String) {
        let text = errors(manifest)
        #expect(text.contains("error:"), "\(text)")
        #expect(!text.contains("indented with a tab"), "\(text)")
    }
}

/// Paths are not expanded: a `${...}` in a download's `to:` made a folder named `${HOME}`.
@Suite(.timeLimit(.minutes(5))) struct UnexpandedPathTests {
    @Test func aReferenceInAPathIsRefused() {
        let text = errors("""
            version: 1
            downloads:
              - { url: "https://h/a", to: "${HOME}/a.txt" }
            uploads:
              - { from: "${DIST}/app.tar", to: "https://h/u" }
            """)
        #expect(text.contains("downloads[0].to: ${...} is not expanded in a download's to:"), "\(text)")
        #expect(text.contains("uploads[0].from: ${...} is not expanded in an upload's from:"), "\(text)")
        #expect(errors("version: 1\ncache: ${RUNNER_TEMP}/syncr\n").contains("cache: ${...} is not expanded in cache:"))
    }
}

/// A checksum written with its algorithm in front, as lockfiles and registries write it.
@Suite(.timeLimit(.minutes(5))) struct ChecksumPrefixTests {
    @Test func thePrefixIsNamed() {
        let hex = String(repeating: "ab", count: 32)
        let text = errors("version: 1\ndownloads:\n  - { url: \"https://h/a\", to: a, sha256: \"sha256:\(hex)\" }\n")
        #expect(text.contains("downloads[0].sha256: expected 64 hex digits; drop the 'sha256:' in front"), "\(text)")
        let md5 = errors("version: 1\ndownloads:\n  - { url: \"https://h/a\", to: a, sha256: \"md5:\(hex.prefix(32))\" }\n")
        #expect(md5.contains("that is a md5 digest: give it as md5: instead"), "\(md5)")
        let sri = errors("version: 1\ndownloads:\n  - { url: \"https://h/a\", to: a, sha256: \"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\" }\n")
        #expect(sri.contains("that is a Subresource Integrity value, whose digest is base64"), "\(sri)")
    }
}

/// A file inside a folder another entry unpacks: said as such, in either order (it said the
/// unpacked folder "writes a file").
@Suite(.timeLimit(.minutes(5))) struct WholeFolderClaimTests {
    @Test func aFileInsideAnUnpackedFolderIsRefusedSayingSo() {
        let unpackFirst = errors("""
            version: 1
            downloads:
              - { url: "https://h/a.zip", to: vendor/app, unzip: true }
              - { url: "https://h/x.zip", to: vendor/app/extra.zip }
            """)
        #expect(unpackFirst.contains("\"vendor/app/extra.zip\" is inside the folder that downloads[0] (line 3) unpacks, replacing the folder as a whole"), "\(unpackFirst)")
        let fileFirst = errors("""
            version: 1
            downloads:
              - { url: "https://h/x.zip", to: vendor/app/extra.zip }
              - { url: "https://h/a.zip", to: vendor/app, unzip: true }
            """)
        #expect(fileFirst.contains("\"vendor/app\" holds what downloads[0] (line 3) writes, in the folder this entry unpacks, replacing the folder as a whole"), "\(fileFirst)")
    }
}

/// A UTF-16 manifest is refused saying so (its messages quoted lines with NULs in them).
@Suite(.timeLimit(.minutes(5))) struct EncodingTests {
    @Test func utf16IsRefused() throws {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in "version: 1\ndownloads: []\n".utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        do {
            _ = try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/work/proj", environment: [:])
            Issue.record("parsed")
        } catch {
            #expect(error.description.contains("the manifest is UTF-16"), "\(error)")
        }
    }

    /// A UTF-16 surrogate written as UTF-8 (ED A0 80 to ED BF BF, as CESU-8 and Java's
    /// modified UTF-8 write half of a character beyond U+FFFF) got libyaml's bare "invalid
    /// Unicode character": it is refused as bytes that are not UTF-8 are, at its line and
    /// column (counted in characters: the `é` before it is one), naming the surrogate.
    @Test func anEncodedSurrogateIsRefusedAtItsBytesWithAdvice() throws {
        let bytes = Array("version: 1\n# café ".utf8) + [0xED, 0xA0, 0x80] + Array(" x\ndownloads: []\n".utf8)
        do {
            _ = try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/work/proj", environment: [:])
            Issue.record("parsed")
        } catch {
            #expect(error.description == """
                syncr.yml:2:8: error: the manifest is not UTF-8: bytes 0xED 0xA0 0x80 here encode U+D800, half of a UTF-16 surrogate pair, which UTF-8 does not allow (CESU-8 and Java's modified UTF-8 write a character beyond U+FFFF so); save it as UTF-8
                # café \u{FFFD}\u{FFFD}\u{FFFD} x
                       ^
                """)
        }
    }

    /// The last surrogate, and a CESU-8 pair (U+1F600 as ED A0 BD ED B8 80) in a quoted value:
    /// the first half is named, where it starts.
    @Test(arguments: [
        ([0xED, 0xBF, 0xBF], "2:12", "bytes 0xED 0xBF 0xBF here encode U+DFFF"),
        ([0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80], "2:12", "bytes 0xED 0xA0 0xBD here encode U+D83D"),
    ] as [([UInt8], String, String)])
    func surrogatesInAValueAreNamed(encoded: [UInt8], position: String, words: String) throws {
        let bytes = Array("version: 1\ncache: \"ab/".utf8) + encoded + Array("\"\n".utf8)
        do {
            _ = try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/work/proj", environment: [:])
            Issue.record("parsed")
        } catch {
            #expect(error.diagnostics.count == 1)
            #expect(error.description.hasPrefix("syncr.yml:\(position): error: the manifest is not UTF-8: \(words), half of a UTF-16 surrogate pair"), "\(error)")
            #expect(error.description.contains("; save it as UTF-8\n"), "\(error)")
        }
    }

    /// A Latin-1 `é` in a comment got libyaml's "invalid trailing UTF-8 octet", a character
    /// past it, and no advice.
    @Test func latin1IsRefusedAtItsByteWithAdvice() throws {
        let bytes = Array("version: 1\n# caf".utf8) + [0xE9] + Array(" au lait\ndownloads: []\n".utf8)
        do {
            _ = try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/work/proj", environment: [:])
            Issue.record("parsed")
        } catch {
            #expect(error.description == """
                syncr.yml:2:6: error: the manifest is not UTF-8: byte 0xE9 here starts no UTF-8 character (Latin-1 or Windows-1252 text, as some editors save an accented letter, is not UTF-8); save it as UTF-8
                # caf\u{FFFD} au lait
                     ^
                """)
        }
    }
}
