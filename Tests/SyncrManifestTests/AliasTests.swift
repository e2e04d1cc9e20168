import Testing
@testable import SyncrManifest

/// Anchors, aliases and merge keys: what they decode to, and the bound on their expansion.
/// (The error texts are in GoldenErrorTests.)
@Suite(.timeLimit(.minutes(10))) struct AliasTests {
    @Test func aliasReusesAHeaderBlock() throws {
        let m = try parse("""
            version: 1
            defaults:
              headers: &common
                User-Agent: "ci-fetch/1.0"
            downloads:
              - url: https://example.com/a.bin
                to: a.bin
                headers: *common
            """)
        #expect(m.downloads[0].settings.headers == [Header(name: "User-Agent", value: Template(literal: "ci-fetch/1.0"))])
    }

    /// YAML 1.1 merge: a key written in the mapping wins over a merged one, and an earlier
    /// mapping of a merge list wins over a later one.
    @Test func mergeKeyExplicitKeysAndEarlierMapsWin() throws {
        let m = try parse("""
            version: 1
            x-slow: &slow
              retries: 9
              timeout: 5m
            x-fast: &fast
              retries: 1
              timeout: 10s
              connections: 4
            downloads:
              - <<: [*slow, *fast]
                url: https://example.com/a
                to: a
                timeout: 1s
              - url: https://example.com/b
                to: b
                <<: *fast
            """)
        let a = m.downloads[0].settings
        #expect(a.retries == 9)
        #expect(a.timeoutMilliseconds == 1_000)
        #expect(a.connections == 4)
        let b = m.downloads[1].settings
        #expect(b.retries == 1)
        #expect(b.timeoutMilliseconds == 10_000)
    }

    @Test func mergeOfAnInlineMappingAndNestedMerges() throws {
        let m = try parse("""
            version: 1
            x-base: &base
              retries: 2
            x-more: &more
              <<: *base
              connections: 3
            downloads:
              - { <<: *more, url: https://example.com/a, to: a }
              - { <<: { retries: 7 }, url: https://example.com/b, to: b }
            """)
        #expect(m.downloads[0].settings.retries == 2)
        #expect(m.downloads[0].settings.connections == 3)
        #expect(m.downloads[1].settings.retries == 7)
    }

    /// YAML 1.2 §7.1: an alias refers to the most recent node before it with that anchor.
    @Test func redefinedAnchorLatestDefinitionBeforeTheAliasWins() throws {
        let m = try parse("""
            version: 1
            x-a: &r 4
            downloads:
              - { url: https://example.com/a, to: a, retries: *r }
              - { url: https://example.com/b, to: b, retries: &r 6 }
              - { url: https://example.com/c, to: c, retries: *r }
            """)
        #expect(m.downloads.map(\.settings.retries) == [4, 6, 6])
    }

    /// A header from `${ENV}` is a secret however it is reached.
    @Test func secretFromEnvironmentStaysASecretThroughAnAlias() throws {
        let m = try parse("""
            version: 1
            x-auth: &auth
              Authorization: "Bearer ${TOKEN}"
            downloads:
              - url: https://example.com/a
                to: a
                headers: *auth
            """, environment: ["TOKEN": "s3cret-token"])
        let header = try #require(m.downloads[0].settings.headers.first)
        #expect(header.value.expanded == "Bearer s3cret-token")
        #expect(header.value.secrets == ["s3cret-token"])
        #expect(m.secrets == ["s3cret-token"])
        #expect(header.value.description == "Bearer ${TOKEN}")
    }

    /// An upload's Content-Type header is refused when it arrives through a merge too.
    @Test func mergedContentTypeHeaderOnAnUploadIsRefused() {
        let text = errors("""
            version: 1
            x-h: &h { Content-Type: text/plain }
            uploads:
              - from: a
                to: https://example.com/up
                headers: { <<: *h, X-Build: "1" }
            """)
        #expect(text.hasPrefix("syncr.yml:2:11: error: uploads[0].headers.Content-Type: set the file's type with content_type: instead of a Content-Type header"), "\(text)")
        #expect(text.contains("(used by the alias at 6:20)"), "\(text)")
    }

    /// A manifest with much reuse stays within the bound: a 40-header block (81 nodes) used by
    /// 500 entries expands to about 45,000 nodes from about 3,600 written.
    @Test func heavyLegitimateReuseIsAccepted() throws {
        var yaml = "version: 1\nx-h: &h\n"
        for i in 0..<40 { yaml += "  X-Header-\(i): value-\(i)\n" }
        yaml += "downloads:\n"
        for i in 0..<500 { yaml += "  - { url: https://example.com/\(i), to: f\(i), headers: *h }\n" }
        let m = try parse(yaml)
        #expect(m.downloads.count == 500)
        #expect(m.downloads[499].settings.headers.count == 40)
    }

    /// The "billion laughs" document: nine levels of ten aliases, 10^9 values from about 100
    /// written. It is refused from the counts alone, at the alias that crosses the limit.
    @Test func billionLaughsIsRefusedBeforeExpanding() {
        var yaml = "version: 1\nx-0: &l0 [lol]\n"
        for level in 1...9 {
            let refs = Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ")
            yaml += "x-\(level): &l\(level) [\(refs)]\n"
        }
        let text = errors(yaml)
        #expect(text.hasPrefix("syncr.yml:7:"))
        #expect(text.contains("aliases expand this document to more than 100000 values"))
        #expect(text.contains("alias bomb"))
    }

    /// A bomb is not expanded, so nothing is decoded: the broken aliases before it are
    /// reported with it, in line order.
    @Test func aBombIsReportedWithTheBrokenAliasesBeforeIt() {
        var yaml = "version: 1\ncache: *nope\nx-0: &l0 [lol]\n"
        for level in 1...9 {
            let refs = Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ")
            yaml += "x-\(level): &l\(level) [\(refs)]\n"
        }
        let rendered = errors(yaml)
        #expect(rendered.hasPrefix("""
            syncr.yml:2:8: error: the alias *nope refers to no anchor; define &nope on a value before this line (an anchor must come before its aliases)
            cache: *nope
                   ^
            syncr.yml:8:
            """), "\(rendered)")
        #expect(rendered.contains("this looks like an alias bomb"), "\(rendered)")
    }

    /// Aliases to deep values, each nesting the one before: 40 levels of 40-deep sequences
    /// write 1,700 nodes but nest 1,600 deep. Refused from the depths, before the tree (and the
    /// stack of the code that would walk it) is built.
    @Test func nestingThroughAliasesIsBounded() {
        var yaml = "version: 1\nx-0: &d0 " + String(repeating: "[", count: 40) + "x" + String(repeating: "]", count: 40) + "\n"
        for level in 1..<40 {
            yaml += "x-\(level): &d\(level) " + String(repeating: "[", count: 40) + "*d\(level - 1)"
                + String(repeating: "]", count: 40) + "\n"
        }
        let text = errors(yaml)
        #expect(text.contains("error: this value nests more than 1000 levels deep once its aliases are expanded"), "\(text)")
        #expect(text.hasPrefix("syncr.yml:26:7: "), "\(text)")
    }

    /// An alias bomb whose nodes reach Int.max when counted must not overflow the count.
    @Test func countsSaturateInsteadOfOverflowing() {
        var yaml = "version: 1\nx-0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...40 {
            let refs = Array(repeating: "*l\(level - 1)", count: 8).joined(separator: ", ")
            yaml += "x-\(level): &l\(level) [\(refs)]\n"
        }
        #expect(errors(yaml).contains("alias bomb"))
    }
    /// An alias to a missing anchor stopped every other error from being reported. It is now
    /// one error among the others, in line order; nothing is said of what stands in its place
    /// (an alias as a value, as an entry, as a merge, in a merge list), nor of a required key
    /// an entry that merges one lacks.
    @Test func aMissingAnchorIsOneErrorAmongTheOthersInLineOrder() {
        let yaml = """
            version: 1
            x-base: &base
              retries: 3
            downloads:
              - url: https://example.com/a
                to: a.bin
                sha256: zz
                headers: *nope
              - <<: *missing
                to: b.bin
              - *gone
              - url: *u
                retries: abc
              - url: https://example.com/c
                to: c.bin
                <<: [*base, *other]
            uploads:
              - from: x
                to: ftp://no
            """
        let noAnchor = "refers to no anchor; define"
        #expect(errors(yaml) == """
            syncr.yml:7:13: error: downloads[0].sha256: expected 64 hex digits, found a non-hex character 'z' at position 1
                sha256: zz
                        ^
            syncr.yml:8:14: error: the alias *nope \(noAnchor) &nope on a value before this line (an anchor must come before its aliases)
                headers: *nope
                         ^
            syncr.yml:9:9: error: the alias *missing \(noAnchor) &missing on a value before this line (an anchor must come before its aliases)
              - <<: *missing
                    ^
            syncr.yml:11:5: error: the alias *gone \(noAnchor) &gone on a value before this line (an anchor must come before its aliases)
              - *gone
                ^
            syncr.yml:12:5: error: downloads[3]: missing required key 'to'
              - url: *u
                ^
            syncr.yml:12:10: error: the alias *u \(noAnchor) &u on a value before this line (an anchor must come before its aliases)
              - url: *u
                     ^
            syncr.yml:13:14: error: downloads[3].retries: expected an integer, found "abc"
                retries: abc
                         ^
            syncr.yml:16:17: error: the alias *other \(noAnchor) &other on a value before this line (an anchor must come before its aliases)
                <<: [*base, *other]
                            ^
            syncr.yml:19:9: error: uploads[0].to: expected an http(s) URL, found "ftp://no": its scheme is not http, https or s3 (the only ones syncr speaks)
                to: ftp://no
                    ^
            """)
    }

    /// An alias inside its own anchored value is likewise one error among the others, and an
    /// alias copied from an anchor that holds a broken one says nothing more of it.
    @Test func anAliasInsideItsOwnAnchorAndCopiesOfABrokenOneAreOneErrorEach() {
        let rendered = errors("""
            version: 1
            x-h: &h { X-A: *none }
            downloads:
              - &self { url: https://example.com/d, to: d.bin, headers: *self }
              - { url: https://example.com/e, to: e.bin, headers: *h, retries: -1 }
            """)
        #expect(rendered == """
            syncr.yml:2:16: error: the alias *none refers to no anchor; define &none on a value before this line (an anchor must come before its aliases)
            x-h: &h { X-A: *none }
                           ^
            syncr.yml:4:61: error: the alias *self is inside the value anchored &self at 4:5, so that value would contain itself; move the alias out of it
              - &self { url: https://example.com/d, to: d.bin, headers: *self }
                                                                        ^
            syncr.yml:5:68: error: downloads[1].retries: expected an integer from 0 to 100, found -1
              - { url: https://example.com/e, to: e.bin, headers: *h, retries: -1 }
                                                                               ^
            """)
    }

    /// libyaml's parser cannot go on past a syntax error (it returns the same error from then
    /// on): the broken aliases before it are reported with it, in line order.
    @Test func aSyntaxErrorIsReportedWithTheBrokenAliasesBeforeIt() {
        #expect(errors("""
            version: 1
            downloads:
              - url: *nope
                to: a
              - url: [unclosed
                to: b
            """) == """
            syncr.yml:3:10: error: the alias *nope refers to no anchor; define &nope on a value before this line (an anchor must come before its aliases)
              - url: *nope
                     ^
            syncr.yml:6:7: error: did not find expected ',' or ']' (while parsing a flow sequence at 5:10)
                to: b
                  ^
            """)
    }
}

/// `ManifestError` hands its diagnostics out in source order whatever order they were found in:
/// file-level ones first, then by line and column, ties in the order found.
@Suite(.timeLimit(.minutes(5))) struct DiagnosticOrderTests {
    @Test func diagnosticsAreSortedByPosition() {
        func at(_ line: Int?, _ column: Int, _ path: String) -> Diagnostic {
            Diagnostic(file: "syncr.yml", location: line.map { SourceLocation(file: "syncr.yml", line: $0, column: column) },
                       path: path, message: "m", sourceLine: nil)
        }
        let error = ManifestError(diagnostics: [
            at(12, 3, "c"), at(2, 9, "b"), at(12, 1, "d"), at(nil, 0, "a"), at(2, 9, "b2"), at(100, 1, "e"), at(12, 3, "c2"),
        ])
        #expect(error.diagnostics.map(\.path) == ["a", "b", "b2", "d", "c", "c2", "e"])
    }
}
