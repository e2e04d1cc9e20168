import SyncrManifest
import Testing
@testable import SyncrCore

/// What a netrc file gives curl for a host (`NetrcLookup`, read as curl reads it), and the
/// words after a 401 or 403 made from what the entry sent (`SyncError.credentialsText`).
@Suite(.timeLimit(.minutes(10)))
struct RefusedCredentialsTextTests {
    static func match(_ text: String, host: String = "files.example") -> NetrcMatch {
        NetrcLookup.match(host: host, in: Array(text.utf8), file: "/home/me/.netrc")
    }

    @Test func aMachineIsFoundAsCurlFindsIt() {
        #expect(Self.match("machine other login a password b\nMACHINE Files.Example LOGIN u PASSWORD p\n")
            == .machine(file: "/home/me/.netrc", host: "files.example", password: true))
        #expect(Self.match("machine files.example login u\n")
            == .machine(file: "/home/me/.netrc", host: "files.example", password: false))
        // The first entry that fits wins; a later password is another machine's.
        #expect(Self.match("machine files.example login u\nmachine x login v password w\n")
            == .machine(file: "/home/me/.netrc", host: "files.example", password: false))
        #expect(Self.match("machine other login a password b\ndefault login anonymous password guest\n")
            == .defaultEntry(file: "/home/me/.netrc", password: true))
    }

    @Test func aCommentedMachineAndAMacroAreNoMachine() {
        #expect(Self.match("# machine files.example login u password p\nmachine other login a password b\n")
            == .noMachine(file: "/home/me/.netrc", host: "files.example"))
        #expect(Self.match("macdef init\nmachine files.example\n\nmachine other password b\n")
            == .noMachine(file: "/home/me/.netrc", host: "files.example"))
        #expect(Self.match("") == .noMachine(file: "/home/me/.netrc", host: "files.example"))
    }

    @Test func brokenSyntaxIsNamedWithItsLine() {
        #expect(Self.match("machine other login a password b\nmachine files.example login u password \"p\n")
            == .malformed(file: "/home/me/.netrc", line: 2, problem: "a quoted value has no closing quote on its line"))
        #expect(Self.match("machine other login a password b\nmachine")
            == .malformed(file: "/home/me/.netrc", line: 2, problem: "machine at the end of the file names no host"))
    }

    @Test func aFileThatCannotBeReadIsSaid() throws {
        #expect(NetrcLookup.match(host: "h", in: "/nonexistent/.netrc") == .unreadable(file: "/nonexistent/.netrc", errno: 2))
        #expect(NetrcLookup.match(host: "h", in: "/") == .unreadable(file: "/", errno: 21))
    }

    static let url = "https://files.example/f.bin"

    /// The hint names what went, or why nothing did; never a value.
    @Test(arguments: [
        (401, SentCredentials(netrc: .machine(file: "/root/.netrc", host: "files.example", password: true)),
         " (the server refused the credentials from /root/.netrc (machine files.example): check them)"),
        (401, SentCredentials(netrc: .defaultEntry(file: "/root/.netrc", password: false)),
         " (the server refused the credentials from /root/.netrc (its default entry, which gives no password: add one): check them)"),
        (401, SentCredentials(netrc: .noMachine(file: "/root/.netrc", host: "files.example")),
         " (netrc: true is set but /root/.netrc has no machine for files.example and no default: add one)"),
        (403, SentCredentials(netrc: .unreadable(file: "/ci/netrc", errno: 13)),
         " (netrc: true is set but /ci/netrc cannot be read (Permission denied): create it, or set NETRC to the netrc file)"),
        (401, SentCredentials(netrc: .malformed(file: "/root/.netrc", line: 3, problem: "a quoted value has no closing quote on its line")),
         " (netrc: true is set but /root/.netrc cannot be read as a netrc file (line 3: a quoted value has no closing quote "
            + "on its line): fix it)"),
        (401, SentCredentials(),
         " (no credentials were sent: add headers:, user:password@ in the URL, or netrc: true)"),
        (403, SentCredentials(),
         " (no credentials were sent; if the URL needs some, add headers:, user:password@ in the URL, or netrc: true)"),
        (403, SentCredentials(headers: ["X-Api-Key", "Cookie"], inURL: true),
         " (the server refused access with the credentials from the entry's X-Api-Key, Cookie headers and the user "
            + "information in its URL: check them, and that they may reach this URL)"),
        (401, SentCredentials(headers: ["X-Api-Key"], netrc: .noMachine(file: "/root/.netrc", host: "files.example")),
         " (the server refused the credentials from the entry's X-Api-Key header: check them; netrc: true is set but "
            + "/root/.netrc has no machine for files.example and no default: add one)"),
        (401, SentCredentials(headers: ["Authorization"], withheldByRedirect: true),
         " (redirects took the request to another origin, where the entry's credentials are not sent: "
            + "set trusted_redirects: true on the entry if that server is to have them)"),
    ] as [(Int, SentCredentials, String)])
    func theHintSaysWhatWasSent(status: Int, sent: SentCredentials, hint: String) {
        let error = SyncError.http(status: status, url: Self.url, body: "", retries: .notRetried, sent: sent)
        #expect(error.description == "\(Self.url): HTTP \(status) \(status == 401 ? "Unauthorized" : "Forbidden")" + hint)
    }

    /// The host in the hint is the expanded URL's: masked where a `${VAR}` gave it, as the URL
    /// is (it was not: "no machine for artifacts.corp.internal").
    @Test func theHintsHostIsMaskedAsTheURLIs() {
        let sent = SentCredentials(netrc: .noMachine(file: "/root/.netrc", host: "artifacts.corp.internal"))
        let error = SyncError.http(status: 401, url: "https://artifacts.corp.internal/lib.jar", body: "", retries: .notRetried,
                                   sent: sent)
        let shown = error.scrubbed(Redactor(secrets: ["artifacts.corp.internal"])).description
        #expect(!shown.contains("artifacts.corp.internal"), "\(shown)")
        #expect(shown.contains("/root/.netrc has no machine for "), "\(shown)")
    }

    /// An Authorization header replaces what curl would send from the URL or netrc: the file
    /// is not read, and only the header is named.
    @Test func anAuthorizationHeaderIsWhatWent() {
        let settings = { (header: String) -> Settings in
            var s = Settings.builtIn
            s.headers = [Header(name: header, value: .init(literal: "Bearer abcdefgh123"))]
            s.network.netrc = true
            return s
        }
        let sent = CredentialSources(url: "https://u:p@files.example/f", settings: settings("Authorization")).sent()
        #expect(sent == SentCredentials(headers: ["Authorization"]))
        // A password in the URL is preferred to netrc (CURL_NETRC_OPTIONAL): the file is not read.
        let other = CredentialSources(url: "https://u:p@files.example/f", settings: settings("X-Api-Key")).sent()
        #expect(other == SentCredentials(headers: ["X-Api-Key"], inURL: true))
    }
}
