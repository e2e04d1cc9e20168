import Testing
@testable import SyncrManifest

@Suite(.timeLimit(.minutes(10))) struct ManifestErrorsTests {
    /// A digest of the other algorithm's length is named as such: a 32-digit MD5 under
    /// `sha256:` (release pages list both side by side) and the reverse.
    @Test func aDigestOfTheOtherLengthIsNamed() {
        let md5 = String(repeating: "ab", count: 16), sha = String(repeating: "cd", count: 32)
        let rendered = errors("""
            version: 1
            downloads:
              - { url: "https://example.com/a", to: a, sha256: \(md5) }
              - { url: "https://example.com/b", to: b, md5: \(sha) }
            """)
        #expect(rendered.contains("downloads[0].sha256: expected 64 hex digits, found 32; that is the length of an MD5: if it is one, write it as md5:"), "\(rendered)")
        #expect(rendered.contains("downloads[1].md5: expected 32 hex digits, found 64; that is the length of a SHA-256: if it is one, write it as sha256:"), "\(rendered)")
    }

    @Test func everyErrorReportedInSourceOrder() {
        let yaml = """
            version: 1
            dowloads: []
            defaults:
              retries: -1
            downloads:
              - url: https://example.com/a
                to: ../a
                sha256: xyz
              - to: b
                md5: 123
            """
        let rendered = errors(yaml)
        #expect(rendered == """
            syncr.yml:2:1: error: dowloads: unknown key 'dowloads'; did you mean 'downloads'?
            dowloads: []
            ^
            syncr.yml:4:12: error: defaults.retries: expected an integer from 0 to 100, found -1
              retries: -1
                       ^
            syncr.yml:7:9: error: downloads[0].to: "../a" is outside the manifest's folder; set allow_outside: true on this entry if that is intended
                to: ../a
                    ^
            syncr.yml:8:13: error: downloads[0].sha256: expected 64 hex digits, found a non-hex character 'x' at position 1
                sha256: xyz
                        ^
            syncr.yml:9:5: error: downloads[1]: missing required key 'url'
              - to: b
                ^
            syncr.yml:10:10: error: downloads[1].md5: expected 32 hex digits, found 3
                md5: 123
                     ^
            """)
        do {
            _ = try parse(yaml)
            Issue.record("expected an error")
        } catch {
            #expect(error.diagnostics.count == 6)
            #expect(error.diagnostics.map(\.path) == [
                "dowloads", "defaults.retries", "downloads[0].to", "downloads[0].sha256",
                "downloads[1]", "downloads[1].md5",
            ])
            #expect(error.diagnostics[1].sourceLine == "  retries: -1")
            #expect(error.diagnostics[1].location == SourceLocation(file: "syncr.yml", line: 4, column: 12))
        }
    }

    @Test(arguments: [
        ("sah256", "sha256"), ("URL", "url"), ("too", "to"), ("timout", "timeout"),
        ("header", "headers"), ("retry", "retries"), ("allow-outside", "allow_outside"),
    ])
    func didYouMean(typo: String, meant: String) {
        #expect(KeySuggestion.suggestion(for: typo, among: ManifestKeys.download) == meant)
    }

    @Test(arguments: ["colour", "zzzzzz", "x"])
    func nothingClose(key: String) {
        #expect(KeySuggestion.suggestion(for: key, among: ManifestKeys.download) == nil)
    }

    @Test func yamlSyntaxErrorAtProblemMark() {
        let yaml = """
            version: 1
            downloads:
              - url: a: b
            """
        #expect(errors(yaml) == """
            syncr.yml:3:11: error: mapping values are not allowed in this context
              - url: a: b
                      ^
            """)
    }

    /// Something left open is found only at the end of the input: the error points at where
    /// it was opened, not at a line past the last.
    @Test func yamlSyntaxErrorUnclosedQuote() {
        let rendered = errors("version: 1\ncache: \"abc\n")
        #expect(rendered.hasPrefix("syncr.yml:2:8: error: found unexpected end of stream (while scanning a quoted scalar at 2:8)"),
                "\(rendered)")
    }

    @Test func yamlSyntaxErrorUnclosedFlowSequence() {
        #expect(errors("version: 1\ndownloads:\n  - url: http://h/a\n    to: [a\n") == """
            syncr.yml:4:9: error: did not find expected ',' or ']' (while parsing a flow sequence at 4:9)
                to: [a
                    ^
            """)
    }

    /// libyaml counts a mark's index in characters: with letters beyond ASCII before the end,
    /// the end was taken for a place before it, and the error pointed a line past the last.
    @Test func yamlSyntaxErrorUnclosedFlowSequenceAfterNonASCII() {
        #expect(errors("\u{FEFF}version: 1\n# café, naïve, 日本\ndownloads:\n  - url: http://h/a\n    to: [a\n") == """
            syncr.yml:5:9: error: did not find expected ',' or ']' (while parsing a flow sequence at 5:9)
                to: [a
                    ^
            """)
    }

    @Test func secondDocumentRefused() {
        #expect(errors("version: 1\n---\nversion: 1\n") == """
            syncr.yml:2:1: error: a manifest holds one YAML document; remove this second one
            ---
            ^
            """)
    }

    @Test func invalidUTF8IsASyntaxError() throws {
        let bytes: [UInt8] = Array("version: 1\ncache: a".utf8) + [0xFF, 0x0A]
        #expect(throws: ManifestError.self) {
            try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/p", environment: [:])
        }
        do {
            _ = try ManifestLoader.parse(bytes: bytes, path: "syncr.yml", directory: "/p", environment: [:])
        } catch {
            #expect(error.diagnostics.first?.location?.line == 2)
            #expect(error.diagnostics.first?.location?.column == 9)
        }
    }
}
