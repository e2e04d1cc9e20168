import Testing
@testable import SyncrManifest

/// Exact rendered diagnostics, caret included.
@Suite(.timeLimit(.minutes(10))) struct GoldenErrorTests {
    @Test func shortChecksum() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
              - url: https://example.com/b
                to: b
                sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0
            """
        #expect(errors(yaml) == """
            syncr.yml:7:13: error: downloads[1].sha256: expected 64 hex digits, found 63
                sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0
                        ^
            """)
    }

    @Test func nonHexChecksum() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                md5: abcdgf
            """
        #expect(errors(yaml) == """
            syncr.yml:5:10: error: downloads[0].md5: expected 32 hex digits, found a non-hex character 'g' at position 5
                md5: abcdgf
                     ^
            """)
    }

    @Test func unknownKeyWithSuggestion() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                sah256: 9f86
            """
        #expect(errors(yaml) == """
            syncr.yml:5:5: error: downloads[0].sah256: unknown key 'sah256'; did you mean 'sha256'?
                sah256: 9f86
                ^
            """)
    }

    @Test func unknownKeyListsValidKeys() {
        let yaml = """
            version: 1
            colour: blue
            """
        #expect(errors(yaml) == """
            syncr.yml:2:1: error: colour: unknown key 'colour'; valid keys are: version, cache, defaults, downloads, uploads
            colour: blue
            ^
            """)
    }

    @Test func duplicateKey() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                to: b
            """
        #expect(errors(yaml) == """
            syncr.yml:5:5: error: downloads[0].to: duplicate key 'to' (first at line 4)
                to: b
                ^
            """)
    }

    @Test func missingRequiredKey() {
        let yaml = """
            version: 1
            downloads:
              - to: a
            """
        #expect(errors(yaml) == """
            syncr.yml:3:5: error: downloads[0]: missing required key 'url'
              - to: a
                ^
            """)
    }

    @Test func integerTypeError() {
        let yaml = """
            version: 1
            defaults:
              jobs: four
            """
        #expect(errors(yaml) == """
            syncr.yml:3:9: error: defaults.jobs: expected an integer, found "four"
              jobs: four
                    ^
            """)
    }

    @Test func mappingTypeError() {
        let yaml = """
            version: 1
            defaults:
              headers:
                - a
            """
        #expect(errors(yaml) == """
            syncr.yml:4:5: error: defaults.headers: expected a mapping, found a sequence
                - a
                ^
            """)
    }

    @Test func jobsPerEntry() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                jobs: 2
            """
        #expect(errors(yaml) == """
            syncr.yml:5:5: error: downloads[0].jobs: jobs applies to the whole run; set it under defaults:
                jobs: 2
                ^
            """)
    }

    @Test func unsupportedVersion() {
        #expect(errors("version: 2\n") == """
            syncr.yml:1:10: error: version: unsupported manifest version 2; this syncr reads version 1
            version: 2
                     ^
            """)
    }

    @Test func missingVersion() {
        #expect(errors("downloads: []\n") == """
            syncr.yml:1:1: error: missing required key 'version' (add 'version: 1' at the top)
            downloads: []
            ^
            """)
    }

    @Test func emptyFile() {
        #expect(errors("") == "syncr.yml: error: the manifest is empty; it needs at least 'version: 1'")
        #expect(errors("# only a comment\n") == "syncr.yml: error: the manifest is empty; it needs at least 'version: 1'")
    }

    @Test func documentNotAMapping() {
        #expect(errors("- a\n- b\n") == """
            syncr.yml:1:1: error: expected a mapping with keys like 'version: 1' at the top level, found a sequence
            - a
            ^
            """)
    }

    @Test func downloadsNotASequence() {
        let yaml = """
            version: 1
            downloads:
              url: https://example.com/a
            """
        #expect(errors(yaml) == """
            syncr.yml:3:3: error: downloads: expected a sequence, found a mapping
              url: https://example.com/a
              ^
            """)
    }

    @Test func entryNotAMapping() {
        let yaml = """
            version: 1
            downloads:
              - https://example.com/a
            """
        #expect(errors(yaml) == """
            syncr.yml:3:5: error: downloads[0]: expected a mapping, found "https://example.com/a"
              - https://example.com/a
                ^
            """)
    }

    @Test func badURL() {
        let yaml = """
            version: 1
            downloads:
              - url: ftp://example.com/a
                to: a
            """
        #expect(errors(yaml) == """
            syncr.yml:3:10: error: downloads[0].url: expected an http(s) URL, found "ftp://example.com/a": its scheme is not http, https or s3 (the only ones syncr speaks)
              - url: ftp://example.com/a
                     ^
            """)
    }

    @Test func outsideFolder() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: ../x
            """
        #expect(errors(yaml) == """
            syncr.yml:4:9: error: downloads[0].to: "../x" is outside the manifest's folder; set allow_outside: true on this entry if that is intended
                to: ../x
                    ^
            """)
    }

    @Test func namesAFolder() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: vendor/
            """
        #expect(errors(yaml) == """
            syncr.yml:4:9: error: downloads[0].to: "vendor/" names a folder; give a file path (or set unzip: true to unpack into it)
                to: vendor/
                    ^
            """)
    }

    @Test func duplicateDestination() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: data/a.bin
              - url: https://example.com/b
                to: data/./a.bin
            """
        #expect(errors(yaml) == """
            syncr.yml:6:9: error: downloads[1].to: same destination as downloads[0] (line 4)
                to: data/./a.bin
                    ^
            """)
    }

    @Test func fileWhereAFolderIsNeeded() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: data
              - url: https://example.com/b
                to: data/b.bin
            """
        #expect(errors(yaml) == """
            syncr.yml:6:9: error: downloads[1].to: "data/b.bin" needs a folder where downloads[0] (line 4) writes a file; a path cannot be both a file and a folder
                to: data/b.bin
                    ^
            """)
    }

    @Test func outOfRange() {
        let yaml = """
            version: 1
            defaults:
              retries: 500
              jobs: 0
              timeout: 0s
            """
        #expect(errors(yaml) == """
            syncr.yml:3:12: error: defaults.retries: expected an integer from 0 to 100, found 500
              retries: 500
                       ^
            syncr.yml:4:9: error: defaults.jobs: expected an integer from 1 to 256, found 0
              jobs: 0
                    ^
            syncr.yml:5:12: error: defaults.timeout: expected a duration greater than zero, found "0s"
              timeout: 0s
                       ^
            """)
    }

    @Test func badDuration() {
        #expect(errors("version: 1\ndefaults: { timeout: 30 }\n") == """
            syncr.yml:2:22: error: defaults.timeout: expected a duration like 30s, 500ms or 1m30s, found 30
            defaults: { timeout: 30 }
                                 ^
            """)
    }

    @Test func quotedInteger() {
        #expect(errors("version: 1\ndefaults: { retries: \"3\" }\n") == """
            syncr.yml:2:22: error: defaults.retries: expected an integer, found the string "3" (remove the quotes)
            defaults: { retries: "3" }
                                 ^
            """)
    }

    @Test func badHeaderName() {
        let yaml = """
            version: 1
            defaults:
              headers: { "User Agent": syncr }
            """
        #expect(errors(yaml) == """
            syncr.yml:3:14: error: defaults.headers.User Agent: "User Agent" is not a valid header name; use letters, digits and !#$%&'*+-.^_`|~
              headers: { "User Agent": syncr }
                         ^
            """)
    }

    @Test func downloadKeyUnderDefaults() {
        #expect(errors("version: 1\ndefaults:\n  url: https://x.org/\n") == """
            syncr.yml:3:3: error: defaults.url: url is set on each download entry, not under defaults:
              url: https://x.org/
              ^
            """)
    }

    /// An error inside an aliased value is shown where the value is written (at its anchor, when
    /// it has one: libyaml's node mark), and names the alias that used it.
    @Test func errorInsideAnAliasedValueNamesTheAlias() {
        let yaml = """
            version: 1
            x-h: &h { "User Agent": b }
            downloads:
              - url: https://example.com/a
                to: a
                headers: *h
            """
        #expect(errors(yaml) == """
            syncr.yml:2:11: error: downloads[0].headers.User Agent: "User Agent" is not a valid header name; use letters, digits and !#$%&'*+-.^_`|~ (used by the alias at 6:14)
            x-h: &h { "User Agent": b }
                      ^
            """)
    }

    @Test func nestedAliasesAreNamedInnermostFirst() {
        let yaml = """
            version: 1
            x-r: &r many
            x-e: &e { url: https://example.com/a, to: a, retries: *r }
            downloads:
              - *e
            """
        #expect(errors(yaml) == """
            syncr.yml:2:6: error: downloads[0].retries: expected an integer, found "many" (used by the alias at 3:55, itself used by the alias at 5:5)
            x-r: &r many
                 ^
            """)
    }

    @Test func unknownKeyInAMergedMappingPointsAtTheKey() {
        let yaml = """
            version: 1
            x-base: &base
              retires: 3
            downloads:
              - <<: *base
                url: https://example.com/a
                to: a
            """
        #expect(errors(yaml) == """
            syncr.yml:3:3: error: downloads[0].retires: unknown key 'retires'; did you mean 'retries'? (used by the alias at 5:9)
              retires: 3
              ^
            """)
    }

    @Test func aliasToAnUndefinedAnchor() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                headers: *common
            """
        #expect(errors(yaml) == """
            syncr.yml:5:14: error: the alias *common refers to no anchor; define &common on a value before this line (an anchor must come before its aliases)
                headers: *common
                         ^
            """)
    }

    @Test func aliasInsideItsOwnAnchoredValue() {
        let yaml = """
            version: 1
            x-loop: &loop
              - a
              - *loop
            """
        #expect(errors(yaml) == """
            syncr.yml:4:5: error: the alias *loop is inside the value anchored &loop at 2:9, so that value would contain itself; move the alias out of it
              - *loop
                ^
            """)
    }

    @Test func mergeOfANonMapping() {
        let yaml = """
            version: 1
            x-s: &s just text
            downloads:
              - <<: *s
                url: https://example.com/a
                to: a
            """
        #expect(errors(yaml) == """
            syncr.yml:2:6: error: downloads[0]: expected a mapping or a list of mappings to merge (<<: *name or <<: [*a, *b]), found "just text" (used by the alias at 4:9)
            x-s: &s just text
                 ^
            """)
    }

    /// Only a plain `<<` merges; quoted, it is a key like any other.
    @Test func quotedMergeKeyIsAPlainKey() {
        let yaml = """
            version: 1
            x-b: &b { cache: elsewhere }
            "<<": *b
            """
        #expect(errors(yaml) == """
            syncr.yml:3:1: error: <<: unknown key '<<'; valid keys are: version, cache, defaults, downloads, uploads
            "<<": *b
            ^
            """)
    }

    @Test func aliasBombRefusedAtTheAliasThatCrossesTheLimit() {
        let yaml = """
            version: 1
            x-a: &a [l, l, l, l, l, l, l, l, l, l]
            x-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
            x-c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
            x-d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
            x-e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
            """
        #expect(errors(yaml) == """
            syncr.yml:6:38: error: aliases expand this document to more than 100000 values (10 times the 63 it writes, or at least 100000); this looks like an alias bomb ("billion laughs"); write the repeated values out or nest fewer aliases
            x-e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
                                                 ^
            """)
    }

    @Test func caretCopiesTabs() {
        // Tabs are not YAML indentation, but they may appear inside a flow mapping line.
        let yaml = "version: 1\ndefaults: {\tretries: x }\n"
        #expect(errors(yaml) == "syncr.yml:2:22: error: defaults.retries: expected an integer, found \"x\"\n"
            + "defaults: {\tretries: x }\n"
            + "           \t         ^")
    }

    @Test func unreadableFile() {
        let path = "/nonexistent-syncr-test-folder/syncr.yml"
        #expect(throws: ManifestError.self) { try ManifestLoader.load(path: path, environment: [:]) }
        do {
            _ = try ManifestLoader.load(path: path, environment: [:])
        } catch {
            #expect(error.description == """
                \(path): error: cannot read the manifest: No such file or directory
                hint: name another file, or write one (examples/quickstart/syncr.yml is a start; see man syncr-manifest)
                """)
            #expect(error.diagnostics.first?.location == nil)
        }
    }

    /// A mistyped path to a device or a log is not read until memory runs out (`/dev/zero`
    /// ended in a crash): reading stops past the largest manifest.
    @Test func aFileLargerThanAnyManifestIsNotReadWhole() {
        do {
            _ = try ManifestLoader.load(path: "/dev/zero", environment: [:])
            Issue.record("/dev/zero loaded")
        } catch {
            #expect(error.description == """
                /dev/zero: error: cannot read the manifest: larger than 64 MiB
                hint: is it the right file? A manifest of 100,000 entries is about 10 MiB
                """)
        }
    }

    @Test func standardInputIsNamedByItsPath() {
        do {
            _ = try ManifestLoader.load(path: "-", environment: [:])
            Issue.record("- loaded")
        } catch {
            #expect(error.description.hasSuffix("hint: syncr reads the manifest from a file; for standard input, name /dev/stdin"),
                    "\(error.description)")
        }
    }
}
