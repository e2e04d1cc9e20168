import Testing
@testable import SyncrManifest

/// Local paths (`to:`, `from:`, `cache:`, `ca_cert:`) refuse what made a file other than the one
/// meant: control characters (`to: |` made `a.bin\n`), bidirectional controls (a name that
/// shows as another), and a leading `~`, which no shell expands here.
@Suite(.timeLimit(.minutes(10))) struct PathCharacterTests {
    /// The `|` block keeps the break after its line: the file was made as `a.bin\n`.
    @Test func aLiteralBlockDestinationIsRefusedAtItsLineBreak() {
        let rendered = errors("""
            version: 1
            downloads:
              - url: https://example.com/a.bin
                to: |
                  a.bin

            """)
        #expect(rendered == """
            syncr.yml:4:9: error: downloads[0].to: a path cannot contain a line break or control character, found \\u{A} at its end (a `|` or `>` block keeps the line's break); write the path on the key's line, or start the block with `|-`
                to: |
                    ^
            """)
    }

    @Test(arguments: [
        ("a\\tb", "\\u{9}"), ("a\\rb", "\\u{D}"), ("a\\u001Bb", "\\u{1B}"), ("a\\u007Fb", "\\u{7F}"),
        ("a\\u0085b", "\\u{85}"), ("a\\u009Bb", "\\u{9B}"), ("a\\nb", "\\u{A}"),
    ])
    func controlCharactersAreNamed(escaped: String, named: String) {
        let rendered = errors("version: 1\ndownloads:\n  - { url: \"https://example.com/a\", to: \"\(escaped)\" }\n")
        #expect(rendered.contains("downloads[0].to: a path cannot contain a line break or control character, found \(named); remove it"),
                "\(rendered)")
    }

    /// "Trojan Source": U+202E shows `gpj.exe` as `exe.jpg`.
    @Test(arguments: ["202A", "202E", "2066", "2069"])
    func bidiControlsAreRefused(code: String) {
        let rendered = errors("version: 1\ndownloads:\n  - { url: \"https://example.com/a\", to: \"x\\u\(code)gpj.exe\" }\n")
        #expect(rendered.contains("downloads[0].to: a path cannot contain the bidirectional control \\u{\(code)}, which makes a name display as another; remove it"),
                "\(rendered)")
    }

    /// Every local path is checked alike, all at once.
    @Test func everyLocalPathIsChecked() {
        let rendered = errors("""
            version: 1
            cache: "c\\tc"
            defaults: { ca_cert: "ca\\u202E.pem" }
            uploads:
              - { from: "b\\u0001", to: "https://example.com/up" }
            """)
        #expect(rendered.contains("syncr.yml:2:8: error: cache: a path cannot contain a line break or control character, found \\u{9}; remove it"), "\(rendered)")
        #expect(rendered.contains("syncr.yml:3:22: error: defaults.ca_cert: a path cannot contain the bidirectional control \\u{202E}"), "\(rendered)")
        #expect(rendered.contains("syncr.yml:5:13: error: uploads[0].from: a path cannot contain a line break or control character, found \\u{1}; remove it"), "\(rendered)")
    }

    /// Trailing spaces are legal in a name, and left alone; so are letters beyond ASCII.
    @Test func spacesAndAccentsPass() throws {
        let manifest = try parse("version: 1\ndownloads:\n  - { url: \"https://example.com/a\", to: \"caf\u{E9}/a b \" }\n")
        #expect(manifest.downloads[0].destination == "/work/proj/caf\u{E9}/a b ")
    }

    /// `cache: ~/.cache/syncr` made a folder named `~` in the manifest's folder.
    @Test func aLeadingTildeIsRefusedWithThePathWrittenOut() {
        let rendered = errors("""
            version: 1
            cache: ~/.cache/syncr
            downloads:
              - { url: "https://example.com/b", to: ~/b.txt }
            uploads:
              - { from: ~ci/build, to: "https://example.com/up" }
            """, environment: ["HOME": "/home/me"])
        #expect(rendered == """
            syncr.yml:2:8: error: cache: syncr does not expand ~ (nor ${HOME} in a path): write the path itself (/home/me/.cache/syncr), or ./~/.cache/syncr for a folder really named ~
            cache: ~/.cache/syncr
                   ^
            syncr.yml:4:41: error: downloads[0].to: syncr does not expand ~ (nor ${HOME} in a path): write the path itself (/home/me/b.txt), or ./~/b.txt for a folder really named ~
              - { url: "https://example.com/b", to: ~/b.txt }
                                                    ^
            syncr.yml:6:13: error: uploads[0].from: syncr does not expand ~ (nor ${HOME} in a path): write the path itself (the home folder written out), or ./~ci/build for a folder really named ~ci
              - { from: ~ci/build, to: "https://example.com/up" }
                        ^
            """)
    }

    @Test func aTildeAloneIsRefusedToo() {
        let rendered = errors("version: 1\ncache: \"~\"\n", environment: ["HOME": "/root"])
        #expect(rendered.contains("cache: syncr does not expand ~ (nor ${HOME} in a path): write the path itself (/root), or ./~ for a folder really named ~"), "\(rendered)")
    }

    /// A bare `~` unquoted is YAML's null, so it never reached the path check: `cache: ~` got
    /// "expected a folder path, found ~", with no word of why. Every path key (`cache`, a
    /// download's `to`, `from`, `ca_cert` under defaults and on an entry) now says that YAML
    /// reads it as null and that syncr does not expand `~`, with the path written out.
    @Test func aBareUnquotedTildeIsToldItIsYAMLsNull() {
        let rendered = errors("""
            version: 1
            cache: ~
            defaults:
              ca_cert: ~
            downloads:
              - { url: "https://example.com/b", to: ~ }
              - { url: "https://example.com/c", to: c, ca_cert: ~ }
            uploads:
              - { from: ~, to: "https://example.com/up" }
            """, environment: ["HOME": "/home/me"])
        let advice = "a bare ~ is YAML's null (no value), not the home folder; syncr does not expand ~ (nor ${HOME} in a path): write the path itself (/home/me), or ./~ for a folder really named ~"
        #expect(rendered == """
            syncr.yml:2:8: error: cache: \(advice)
            cache: ~
                   ^
            syncr.yml:4:12: error: defaults.ca_cert: \(advice)
              ca_cert: ~
                       ^
            syncr.yml:6:41: error: downloads[0].to: \(advice)
              - { url: "https://example.com/b", to: ~ }
                                                    ^
            syncr.yml:7:53: error: downloads[1].ca_cert: \(advice)
              - { url: "https://example.com/c", to: c, ca_cert: ~ }
                                                                ^
            syncr.yml:9:13: error: uploads[0].from: \(advice)
              - { from: ~, to: "https://example.com/up" }
                        ^
            """)
    }

    /// Other nulls are not taken for a `~`: `cache: null` and `to:` with nothing are refused as
    /// before, and without HOME the advice says to write the home folder out.
    @Test func otherNullsKeepTheirMessageAndNoHomeIsSaidSo() {
        let rendered = errors("""
            version: 1
            cache: null
            downloads:
              - { url: "https://example.com/b", to: }
              - { url: "https://example.com/c", to: ~ }
            """)
        #expect(rendered == """
            syncr.yml:2:8: error: cache: expected a folder path, found null
            cache: null
                   ^
            syncr.yml:4:41: error: downloads[0].to: expected a file path, found nothing
              - { url: "https://example.com/b", to: }
                                                    ^
            syncr.yml:5:41: error: downloads[1].to: a bare ~ is YAML's null (no value), not the home folder; syncr does not expand ~ (nor ${HOME} in a path): write the path itself (the home folder written out), or ./~ for a folder really named ~
              - { url: "https://example.com/c", to: ~ }
                                                    ^
            """)
    }

    /// The way to name a folder really called `~`.
    @Test func aTildeAfterDotSlashIsAFolderOfThatName() throws {
        let manifest = try parse("""
            version: 1
            cache: ./~/cache
            downloads:
              - { url: "https://example.com/b", to: ./~/b.txt }
            uploads:
              - { from: ./~/build, to: "https://example.com/up" }
            """)
        #expect(manifest.cacheDirectory == "/work/proj/~/cache")
        #expect(manifest.downloads[0].destination == "/work/proj/~/b.txt")
        #expect(manifest.uploads[0].source == "/work/proj/~/build")
    }
}
