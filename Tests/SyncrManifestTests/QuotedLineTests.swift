import Testing
@testable import SyncrManifest

/// The line a manifest error quotes masks every secret written on it, whatever the error is
/// about, and the caret stays under the value the error names.
@Suite(.timeLimit(.minutes(5))) struct QuotedLineTests {
    /// An unset variable in one header, a token written out in another on the same line: the
    /// error (exit 65 in a CI log) quotes the line with the token masked.
    @Test func aTokenWrittenOutBesideTheBadValueIsMasked() {
        let text = errors("""
            version: 1
            downloads:
              - url: http://example.com/a
                to: a
                headers: { Authorization: "Bearer LIT3RALTOK99", X-Tenant: "${TENANT}" }
            """)
        #expect(text == """
            syncr.yml:5:64: error: downloads[0].headers.X-Tenant: environment variable TENANT is not set (set it, or write ${TENANT:-default})
                headers: { Authorization: "Bearer ***", X-Tenant: "${TENANT}" }
                                                                  ^
            """)
    }

    /// A header decoded after the problem was reported (a bad header name after a cookie) is
    /// masked too; the cookie's value and the token both.
    @Test func aCookieAndATokenBeforeABadNameAreMasked() {
        let text = errors("""
            version: 1
            defaults:
              headers: { Authorization: "Bearer LIT3RALTOK99", Cookie: "session=C00KIESECRET1", "Bad Name": x }
            downloads:
              - { url: "http://example.com/a", to: a }
            """)
        #expect(!text.contains("LIT3RALTOK99") && !text.contains("C00KIESECRET1"), "\(text)")
        #expect(text.hasSuffix("""
              headers: { Authorization: "Bearer ***", Cookie: "***", "Bad Name": x }
                                                                     ^
            """), "\(text)")
    }

    /// The caret sits under the value named, not where it was before the URL's password and
    /// signature were masked (past the end of the line).
    @Test func theCaretFollowsTheMaskedLine() {
        let text = errors("""
            version: 1
            downloads:
              - { url: "http://dan:PASSLEAK4@x/d?sig=SIGLEAK4", to: d, md5: zz }
            """)
        #expect(text.hasSuffix("""
              - { url: "http://dan:***@x/d?sig=***", to: d, md5: zz }
                                                                 ^
            """), "\(text)")
    }

    /// A YAML syntax error comes before any header is read: the pairs written on the line are
    /// masked from its text (a token, each cookie pair, a key).
    @Test func aSyntaxErrorsLineMasksTheHeadersWrittenOnIt() {
        let text = errors("""
            version: 1
            downloads:
              - { url: "http://x/a", to: a, headers: { Cookie: "a=C00KIESECRET1; b=short", X-Api-Key: k3y-0123456789, Authorization: 'Basic dXNlcjpwYXNzd29yZA==', X: [ } }
            """)
        #expect(text.contains("did not find expected node content"), "\(text)")
        #expect(text.contains(#"headers: { Cookie: "***; b=short", X-Api-Key: ***, Authorization: 'Basic ***', X: [ } }"#),
                "\(text)")
    }

    /// A header in a block mapping: a plain value with a space in it, up to its comment.
    @Test func aBlockLinesPlainValueIsMaskedUpToItsComment() {
        let line = "    Authorization: Bearer LIT3RALTOK99   # the token"
        #expect(QuotedLine(line, column: 5, secrets: []).text == "    Authorization: Bearer ***   # the token")
    }

    /// A quote left open, the commonest slip on such a line: the value runs to the line's
    /// end, and its token is masked (block and flow).
    @Test(arguments: [
        (#"      Authorization: "Bearer abc123456789XYZ"#, #"      Authorization: "Bearer ***"#),
        (#"    headers: { Authorization: "Bearer abc123456789XYZ }"#, #"    headers: { Authorization: "Bearer *** }"#),
        (#"      Cookie: 'session=C00KIESECRET1; lang=en"#, #"      Cookie: '***; lang=en"#),
    ])
    func anUnclosedQuotesTokenIsMasked(line: String, masked: String) {
        #expect(QuotedLine(line, column: 1, secrets: []).text == masked)
    }

    /// A bare token followed by more on a line that did not parse: the token itself is masked
    /// (the rule for a parsed value drops the first word, a scheme such as `Bearer`).
    @Test func aBareTokenBeforeJunkIsMasked() {
        let line = "      X-Auth: XSECRET5 ; timeout: nope"
        #expect(QuotedLine(line, column: 1, secrets: []).text == "      X-Auth: *** ; timeout: nope")
    }

    /// The second review's cases: a quote left open on an earlier header must not hide the
    /// credential after it; JSON-style pairs (no blank after the colon); a plain value holding
    /// `#` or `,` (part of it in a block); each token masked whole.
    @Test(arguments: [
        (#"    headers: { Accept: "text/plain, Authorization: "Bearer abc123456789" }"#, "abc123456789"),
        (#"    headers: {"Authorization":"Bearer abc123456789", "X": [}"#, "abc123456789"),
        ("      X-Api-Key: abc#123456789xyz: x", "abc#123456789xyz"),
        ("      X-Api-Key: a,123456789xyz: x", "a,123456789xyz"),
    ])
    func aTokenAfterAnOpenQuoteInJSONOrWithPunctuationIsMasked(line: String, token: String) {
        let masked = QuotedLine(line, column: 1, secrets: []).text
        #expect(!masked.contains(token.dropFirst(2)), "\(masked)")
        #expect(masked.contains("***"), "\(masked)")
    }

    /// A column inside a secret (cut there, so not masked in the part before it) keeps the caret
    /// on the masked line.
    @Test func aColumnInsideASecretKeepsTheCaretOnTheLine() {
        let line = "X-Api-Key: k3y-0123456789"
        let quoted = QuotedLine(line, column: 22, secrets: [])
        #expect(quoted.text == "X-Api-Key: ***")
        #expect(quoted.caretColumn <= quoted.text.unicodeScalars.count + 1)
    }

    /// What does not look like a secret stays (a plain word, a short cookie value, a
    /// `${VAR}` reference, a header that carries none), so messages stay readable.
    @Test func whatIsNotASecretStays() {
        let line = #"headers: { X-Auth-Provider: github, Cookie: "lang=en", Authorization: "Bearer ${TOKEN}", Accept: "text/plain123456" }"#
        #expect(QuotedLine(line, column: 5, secrets: []).text == line)
    }

    /// The caret's column on the masked line: before a secret it stays, after one it moves left
    /// by what the masking took off.
    @Test func theCaretColumnMovesByWhatWasMaskedBeforeIt() {
        let line = #"X-Api-Key: k3y-0123456789, Y: z"#
        #expect(QuotedLine(line, column: 1, secrets: []).caretColumn == 1)
        let masked = QuotedLine(line, column: 31, secrets: [])
        #expect(masked.text == "X-Api-Key: ***, Y: z")
        #expect(masked.caretColumn == 20)
        #expect(Array(masked.text.unicodeScalars)[masked.caretColumn - 1] == "z")
    }
}
