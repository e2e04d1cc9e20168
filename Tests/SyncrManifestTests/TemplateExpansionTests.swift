import Testing
@testable import SyncrManifest

@Suite(.timeLimit(.minutes(10))) struct TemplateExpansionTests {
    typealias Case = (written: String, env: [String: String], expanded: String, secrets: [String])

    @Test(arguments: [
        ("Bearer ${TOKEN}", ["TOKEN": "abc"], "Bearer abc", ["abc"]),
        ("${A}${B}", ["A": "1", "B": "2"], "12", ["1", "2"]),
        ("${A:-fallback}", [:], "fallback", ["fallback"]),
        ("${A:-fallback}", ["A": ""], "fallback", ["fallback"]),
        ("${A:-fallback}", ["A": "set"], "set", ["set"]),
        ("x${A}y", ["A": ""], "xy", []),
        ("${A:-}", [:], "", []),
        ("cost: $5 and $$ and $A", [:], "cost: $5 and $$ and $A", []),
        ("trailing $", [:], "trailing $", []),
        ("${_x1}", ["_x1": "v"], "v", ["v"]),
        // `$${` is a literal `${`, the one way to write one (it expanded to "$" and the value).
        ("/x/$${HOME}/${A}", ["HOME": "/root", "A": "a"], "/x/${HOME}/a", ["a"]),
        ("$$$${A}", ["A": "a"], "$$${A}", []),
    ] as [Case])
    func expands(c: Case) throws {
        let t = try TemplateExpansion.expand(c.written, environment: c.env).get()
        #expect(t.written == c.written)
        #expect(t.expanded == c.expanded)
        #expect(t.secrets == c.secrets)
        #expect(t.description == c.written)
    }

    @Test(arguments: [
        ("${TOKEN}", "environment variable TOKEN is not set (set it, or write ${TOKEN:-default})"),
        ("abc ${", "unterminated reference '${'; close it with '}'"),
        ("${}", "empty reference '${}'; write ${NAME} or ${NAME:-default}"),
        ("${1X}", "invalid variable name in '${1X}'; names are letters, digits and '_', not starting with a digit"),
        ("${A-b}", "unsupported reference '${A-b}'; write ${NAME} or ${NAME:-default}"),
        ("${A B}", "unsupported reference '${A B}'; write ${NAME} or ${NAME:-default}"),
        // Not nested: it ended at the first `}`, and sent the text `${B}}`.
        ("${A:-${B}}", "'${A:-${B}}': a default cannot hold another ${...}; set A, or write the default out"),
        ("x${A:-a${B:-b}}y", "'${A:-a${B:-b}}': a default cannot hold another ${...}; set A, or write the default out"),
    ])
    func refuses(written: String, message: String) {
        let result = TemplateExpansion.expand(written, environment: [:])
        #expect(throws: TemplateExpansion.ProblemList.self) { try result.get() }
        if case .failure(let list) = result {
            #expect(list.problems.map(\.message) == [message])
        }
    }

    /// Refused whether or not A is set: the manifest is wrong either way.
    @Test func aNestedDefaultIsRefusedInTheManifest() {
        let rendered = errors("""
            version: 1
            downloads:
              - url: https://example.com/${A:-${B}}
                to: a
            """, environment: ["A": "a", "B": "b"])
        #expect(rendered == """
            syncr.yml:3:10: error: downloads[0].url: '${A:-${B}}': a default cannot hold another ${...}; set A, or write the default out
              - url: https://example.com/${A:-${B}}
                     ^
            """)
    }

    /// `?token=${TOK}` with TOK=a#b sent `?token=a`: the rest became the fragment, never sent.
    /// The error names the variable, never its value.
    @Test func aHashFromAVariableInAURLIsRefused() {
        let rendered = errors("""
            version: 1
            downloads:
              - url: https://example.com/b.txt?token=${TOK}
                to: b.txt
            uploads:
              - { from: b.txt, to: "https://example.com/up/${NAME}" }
            """, environment: ["TOK": "s3cr3t#tail", "NAME": "x#y"])
        #expect(rendered == """
            syncr.yml:3:10: error: downloads[0].url: the value of ${TOK} holds a '#', which in a URL starts the fragment, never sent (what follows it would be cut off); percent-encode it as %23 in TOK (the value is not shown)
              - url: https://example.com/b.txt?token=${TOK}
                     ^
            syncr.yml:6:24: error: uploads[0].to: the value of ${NAME} holds a '#', which in a URL starts the fragment, never sent (what follows it would be cut off); percent-encode it as %23 in NAME (the value is not shown)
              - { from: b.txt, to: "https://example.com/up/${NAME}" }
                                   ^
            """)
        #expect(!rendered.contains("s3cr3t") && !rendered.contains("tail"))
    }

    /// A `#` written in the manifest, or in a default, is the manifest's own fragment; one
    /// percent-encoded in the variable is sent.
    @Test func aHashWrittenInTheManifestIsKept() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: "https://example.com/a?t=${TOK}#part", to: a }
              - { url: "https://example.com/b?t=${UNSET:-x#y}", to: b }
            """, environment: ["TOK": "a%23b"])
        #expect(manifest.downloads[0].url.expanded == "https://example.com/a?t=a%23b#part")
        #expect(manifest.downloads[1].url.expanded == "https://example.com/b?t=x#y")
    }

    /// A variable that is the whole URL keeps its fragment, as before: nothing of the
    /// manifest's follows it to be cut off. One that starts the URL with text after it does not.
    @Test func aVariableThatIsTheWholeURLKeepsItsFragment() throws {
        let environment = ["ARTIFACT_URL": "https://h/pkg.tgz#sha256=ab", "BASE": "https://h/x#y"]
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: "${ARTIFACT_URL}", to: a }
            """, environment: environment)
        #expect(manifest.downloads[0].url.expanded == "https://h/pkg.tgz#sha256=ab")
        #expect(errors("""
            version: 1
            downloads:
              - { url: "${BASE}/file.bin", to: a }
            """, environment: environment).contains("the value of ${BASE} holds a '#'"))
    }

    /// Headers take a `#` from a variable as it is: it is no URL there.
    @Test func aHashInAHeaderVariableIsKept() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: "https://example.com/a", to: a, headers: { X-Note: "${NOTE}" } }
            """, environment: ["NOTE": "a#b"])
        #expect(manifest.downloads[0].settings.headers.first?.value.expanded == "a#b")
    }

    @Test func unsetVariableInHeaderIsReportedAtTheValue() {
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                headers: { Authorization: "Bearer ${ARTIFACT_TOKEN}" }
            """
        #expect(errors(yaml) == """
            syncr.yml:5:31: error: downloads[0].headers.Authorization: environment variable ARTIFACT_TOKEN is not set (set it, or write ${ARTIFACT_TOKEN:-default})
                headers: { Authorization: "Bearer ${ARTIFACT_TOKEN}" }
                                          ^
            """)
    }

    /// A download's `to:` is a path as written: a reference there is refused (it made a folder
    /// named `${P}`), and `$${` writes the literal characters.
    @Test func toIsNotExpanded() throws {
        #expect(errors("version: 1\ndownloads: [{url: 'https://h/${P}', to: '${P}/f'}]\n", environment: ["P": "seg"])
            .contains("downloads[0].to: ${...} is not expanded"))
        let m = try parse("version: 1\ndownloads: [{url: 'https://h/${P}', to: 'p/f'}]\n", environment: ["P": "seg"])
        #expect(m.downloads[0].url.expanded == "https://h/seg")
        #expect(m.downloads[0].destination == "/work/proj/p/f")
    }

    /// A secret from the environment never shows up in any diagnostic, whatever goes wrong.
    @Test func secretsNeverInDiagnostics() {
        let secret = "hunter2-SECRET"
        let env = ["TOKEN": secret, "HOST": "ftp://\(secret)", "BAD": "x\r\nInjected: \(secret)"]
        let yaml = """
            version: 1
            defaults:
              headers: { X-Token: "${TOKEN}", X-Bad: "${BAD}" }
            downloads:
              - url: "${HOST}/file"
                to: a
                headers: { Authorization: "Bearer ${TOKEN}", X-Missing: "${NOPE}" }
                sha256: "${TOKEN}"
              - url: "https://${TOKEN}@example.com/${TOKEN"
                to: ../${TOKEN}
            """
        do {
            _ = try parse(yaml, environment: env)
            Issue.record("expected errors")
        } catch {
            #expect(error.diagnostics.count == 7)  // `to: ../${TOKEN}` twice: not expanded, outside
            #expect(!error.description.contains(secret))
            for d in error.diagnostics {
                #expect(!d.description.contains(secret))
                #expect(!d.message.contains(secret))
            }
            #expect(error.description.contains("X-Bad: the value contains a line break or NUL after expanding"))
            #expect(error.description.contains(#"downloads[0].url: expected an http(s) URL, found "${HOST}/file""#))
        }
    }

    /// Headers whose names carry credentials are such whatever their value, also written out in
    /// the manifest: what follows an auth scheme, or the whole value, and each cookie pair, are
    /// masked.
    @Test func credentialHeadersByName() throws {
        for name in ["Authorization", "cookie", "X-Api-Key", "Private-Token", "X-Auth-User", "Ocp-Apim-Subscription-Key",
                     "X-Session-Id", "client_secret", "X-Amz-Security-Token", "apikey"] {
            #expect(Header(name: name, value: Template(literal: "v")).carriesCredentials, "\(name)")
        }
        for name in ["Accept", "User-Agent", "X-Request-Id", "Range", "Host", "Content-Type", "X-Author", "X-Keyboard"] {
            #expect(!Header(name: name, value: Template(literal: "v")).carriesCredentials, "\(name)")
        }
        let yaml = """
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                headers: { X-Api-Key: literalkey456, Cookie: "sid=LITCOOKIE444; theme=dark", Authorization: "Bearer lit-token-1", Accept: text/plain, X-Auth-Provider: github }
            """
        let m = try parse(yaml, environment: [:])
        for value in ["literalkey456", "sid=LITCOOKIE444", "lit-token-1"] {
            #expect(m.secrets.contains(value), "\(value)")
        }
        // Plain words are not masked in every message: not secret-like (8 characters or more,
        // not all letters).
        for value in ["text/plain", "Bearer lit-token-1", "theme=dark", "github"] {
            #expect(!m.secrets.contains(value), "\(value): \(m.secrets)")
        }
    }

    @Test func secretsAreCollected() throws {
        let yaml = """
            version: 1
            defaults:
              headers: { X-Api-Key: "${KEY}" }
            downloads:
              - url: https://${USER_PART:-anon}@example.com/a
                to: a
                headers: { Authorization: "Bearer ${TOKEN}", X-Empty: "${EMPTY}" }
            """
        let m = try parse(yaml, environment: ["KEY": "k1", "TOKEN": "long-token", "EMPTY": ""])
        #expect(m.downloads[0].url.secrets == ["anon"])
        // "YW5vbg==" is base64("anon"), the Basic credentials curl would send for it.
        #expect(Set(m.secrets) == ["k1", "long-token", "anon", "YW5vbg=="])
        #expect(m.secrets.first == "long-token")  // longest first, for scrubbing
        #expect(m.downloads[0].settings.headers.map(\.name) == ["X-Api-Key", "Authorization", "X-Empty"])
    }
}
