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
}
