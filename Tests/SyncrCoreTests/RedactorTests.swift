import Testing
@testable import SyncrCore
import SyncrHTTP

@Suite(.timeLimit(.minutes(10))) struct RedactorTests {
    @Test func secretIsMaskedEverywhereItAppears() {
        let r = Redactor(secrets: ["s3cr3t-token"])
        #expect(r.scrub("Authorization: Bearer s3cr3t-token (again: s3cr3t-token)")
            == "Authorization: Bearer *** (again: ***)")
    }

    /// Longest first: a secret that contains another is masked whole, not as `***` around a
    /// leftover of the longer one.
    @Test(arguments: [["abc", "xxabcxx"], ["xxabcxx", "abc"]])
    func containedSecretIsMaskedWhole(secrets: [String]) {
        let r = Redactor(secrets: secrets)
        #expect(r.secrets == ["xxabcxx", "abc"])
        #expect(r.scrub("key=xxabcxx other=abc") == "key=*** other=***")
    }

    /// A server quoting the request back quotes it percent-encoded: that form is masked too,
    /// in either hex case, and as a form writes a space.
    @Test func percentEncodedSecretIsMasked() {
        let r = Redactor(secrets: ["Xy7_secret-TOKEN!", "two words!"])
        #expect(r.scrub("bad token Bearer Xy7_secret-TOKEN%21 for ?access=Xy7_secret-TOKEN%21") == "bad token Bearer *** for ?access=***")
        #expect(r.scrub("x=two%20words%21 y=two+words%21 z=two%20words%21") == "x=*** y=*** z=***")
        let slash = Redactor(secrets: ["a b/c"])
        #expect(slash.scrub("1 a%20b%2Fc 2 a%20b%2fc 3 a+b%2Fc 4 a+b%2fc") == "1 *** 2 *** 3 *** 4 ***")
        // Nothing to encode: no second form.
        #expect(Redactor.percentEncodings("plain-token_1.2~") == [])
    }

    /// A server's JSON error quoting a token escapes its `/` (PHP does by default) and `"`.
    @Test func jsonEscapedSecretIsMasked() {
        let r = Redactor(secrets: ["eyJhbGciOi/JIUzI1+NiJ9/abcDEF==", "pa\"ss/w0rd"])
        let text = r.scrub(#"{"got": "Bearer eyJhbGciOi\/JIUzI1+NiJ9\/abcDEF==", "p": "pa\"ss\/w0rd", "q": "pa\"ss/w0rd"}"#)
        #expect(text == #"{"got": "Bearer ***", "p": "***", "q": "***"}"#, "\(text)")
        let unicode = Redactor(secrets: ["pässwört-☃-𝄞"]).scrub(#"{"pw": "p\u00e4ssw\u00f6rt-\u2603-\ud834\udd1e"}"#)
        #expect(unicode == #"{"pw": "***"}"#, "\(unicode)")
    }

    /// An error page is cut to 300 characters before it is masked: a secret that crosses the
    /// cut is not there whole, and its start must not be shown.
    @Test func theStartOfASecretCutOffIsMasked() {
        let secret = "sk_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        let body = HTTPResponse.printable(Array((String(repeating: "x", count: 280) + " " + secret).utf8))
        #expect(body.hasSuffix("…") && !body.contains(secret))
        let text = Redactor(secrets: [secret]).scrub("server said: " + body)
        #expect(!text.contains("sk_live_A") && text.hasSuffix(" ***…"), "\(text)")
        #expect(Redactor(secrets: [secret]).scrub("ends with sk…") == "ends with sk…", "two bytes say nothing")
    }

    /// A server that quotes the request back may fold its case (`authorization: bearer
    /// mytoken`): a secret long enough is found whatever the case of its ASCII letters, in
    /// every form (as is, percent-encoded, the Basic pair curl sends, cut before a `…`).
    @Test(arguments: [
        ("authorization: bearer mytoken-42", "authorization: bearer ***"),
        ("AUTHORIZATION: BEARER MYTOKEN-42", "AUTHORIZATION: BEARER ***"),
        ("Authorization: Bearer myToken-42 and MYTOKEN-42", "Authorization: Bearer *** and ***"),
        ("x=MYTOKEN-42%21", "x=***"),
        ("authorization: basic ym9iok1zvg9rzw4tndi=", "authorization: basic ***"),
        ("you sent mytok…", "you sent ***…"),
    ])
    func aSecretIsFoundWhateverItsCase(text: String, masked: String) {
        // "Ym9iOk1ZVG9rZW4tNDI=" is base64("bob:MYToken-42"), as a netrc or URL pair gives it.
        let r = Redactor(secrets: ["MYToken-42", "MYToken-42!", "Ym9iOk1ZVG9rZW4tNDI="])
        #expect(r.scrub(text) == masked)
    }

    /// Short secrets, and secrets without letters, are found only as they are: `abc` must not
    /// mask `ABC` in every message.
    @Test func aShortSecretKeepsItsCase() {
        #expect(Redactor(secrets: ["abc12"]).scrub("ABC12 abc12") == "ABC12 ***")
        #expect(Redactor(secrets: ["123456"]).scrub("x 123456") == "x ***")
        #expect(Redactor(secrets: ["Straße-token"]).scrub("STRASSE-TOKEN straße-TOKEN") == "STRASSE-TOKEN ***",
                "ASCII letters only are folded")
    }

    @Test func adjacentSecretsAreBothMasked() {
        let r = Redactor(secrets: ["alpha1", "beta22"])
        #expect(r.scrub("alpha1beta22") == "******")
    }

    /// Two secrets that share characters where they meet: no fragment of either may survive.
    @Test func overlappingSecretsLeaveNoFragment() {
        let r = Redactor(secrets: ["tokenABC", "ABCsecret"])
        let out = r.scrub("x=tokenABCsecret")
        #expect(!out.contains("token"))
        #expect(!out.contains("secret"))
        #expect(out == "x=***")
    }

    @Test(arguments: ["", "1", "ab"])
    func shortValuesAreNotSecrets(value: String) {
        let r = Redactor(secrets: [value])
        #expect(r.secrets.isEmpty)
        #expect(r.scrub("retries ab 1 abc") == "retries ab 1 abc")
    }

    @Test func threeCharactersAreASecret() {
        #expect(Redactor(secrets: ["abc"]).scrub("x abc y") == "x *** y")
    }

    @Test func duplicateSecretsAreKeptOnce() {
        #expect(Redactor(secrets: ["same-value", "same-value"]).secrets == ["same-value"])
    }

    @Test(arguments: [
        ("https://user:pw@host/x", "https://user:***@host/x"),
        ("https://user:pw@host", "https://user:***@host"),
        ("http://user:pw@host:8080/x?y=1", "http://user:***@host:8080/x?y=1"),
        // The last @ ends the credentials: a password may contain an unescaped @.
        ("https://user:p@ss@host/x", "https://user:***@host/x"),
        ("GET https://u:hunter2@a.example/x failed", "GET https://u:***@a.example/x failed"),
        ("\"https://u:pw@h/x\"", "\"https://u:***@h/x\""),
        ("a https://u:one@h/x b ftp://v:two@k/y", "a https://u:***@h/x b ftp://v:***@k/y"),
    ])
    func urlPasswordIsMasked(text: String, masked: String) {
        #expect(Redactor(secrets: []).scrub(text) == masked)
    }

    @Test(arguments: [
        "https://host/x",
        "https://host:8443/x",
        "https://host/x?mail=a@b.example",
        "https://host/a@b",
        "see https://host/x or mail ops@example.com",
        "plain text with no URL at all",
        "",
    ])
    func textWithoutSecretsIsUnchanged(text: String) {
        #expect(Redactor(secrets: ["not-in-the-text"]).scrub(text) == text)
    }

    /// A token in a URL carried, percent-encoded or not, in another parameter's value (a
    /// redirect's target, a login's `next=`) is masked by its name like one in the URL's own query.
    @Test(arguments: [
        ("redirected to https://host/dl?to=https%3A%2F%2Fcdn.example%2Ff%3Ftoken%3DSECRET123%26x%3D1: HTTP 404",
         "redirected to https://host/dl?to=https%3A%2F%2Fcdn.example%2Ff%3Ftoken%3D***%26x%3D1: HTTP 404"),
        ("https://host/login?next=%2Fpath%3Fapi_key%3DSECRET", "https://host/login?next=%2Fpath%3Fapi_key%3D***"),
        ("https://u:pw@host/dl?to=https%253A%252F%252Fcdn%252Ff%253FX-Amz-Signature%253Dabc%2526v%253D1",
         "https://u:***@host/dl?to=https%253A%252F%252Fcdn%252Ff%253FX-Amz-Signature%253D***%2526v%253D1"),
        ("https://host/dl?to=https://cdn/f?token=SECRET", "https://host/dl?to=https://cdn/f?token=***"),
    ])
    func tokenInANestedURLIsMasked(text: String, masked: String) {
        #expect(Redactor(secrets: []).scrub(text) == masked)
    }

    /// A secret that is also a URL password is masked once, not turned into `******`.
    @Test func secretPasswordInURL() {
        let r = Redactor(secrets: ["hunter22"])
        #expect(r.scrub("https://bob:hunter22@host/x") == "https://bob:***@host/x")
    }
}

/// Every event text passes through the redactor on its way to the terminal.
@Suite(.timeLimit(.minutes(10))) struct ScrubbingReporterTests {
    final class Collector: ProgressReporter, @unchecked Sendable {
        // @unchecked: the test reports from one task only.
        var events: [ProgressEvent] = []
        func report(_ event: ProgressEvent) { events.append(event) }
    }

    @Test func retriesNotesAndResultsAreMasked() throws {
        let collector = Collector()
        let reporter = ScrubbingReporter(inner: collector, redactor: Redactor(secrets: ["tok-12345"]))
        let item = PlanItem(index: 0, url: "https://u:pw-secret@h/x", to: "x", action: .download,
                            size: nil, offset: 0, bytes: nil, reason: "token tok-12345")
        reporter.report(.started(item: item))
        reporter.report(.retrying(index: 0, attempt: 1, delay: 1,
                                  error: .http(status: 503, url: "https://u:pw-secret@h/x", body: "", retries: .willRetry)))
        reporter.report(.note(index: 0, note: .resumeDidNotFit(detail: "header tok-12345 refused")))
        let error = SyncError.connection(url: "https://u:pw-secret@h/x", code: 7, message: "tok-12345 refused",
                                         retries: .notRetried)
        reporter.report(.finished(result: ItemResult(item: item, outcome: .failed(error), transferred: 0, seconds: 0,
                                                     notes: [.fellBackToOneStream(detail: "tok-12345")])))
        let text = collector.events.map { "\($0)" }.joined(separator: "\n")
        #expect(collector.events.count == 4)
        #expect(!text.contains("pw-secret"))
        #expect(!text.contains("tok-12345"))
        #expect(text.contains("https://u:***@h/x"))
    }
}
