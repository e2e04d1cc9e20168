import Testing
@testable import SyncrCore

/// The netrc passwords that `netrc: true` lets curl send are masked like every other secret
/// (a server may echo one in an error page); syncr reads them from the file as curl does.
@Suite(.timeLimit(.minutes(10))) struct NetrcSecretsTests {
    @Test func everyPasswordIsFoundWhateverTheLayout() {
        let text = """
            machine a.example login bob password NETRCPW999
            machine b.example
              login alice
              password "quoted pass\\"word"
            macdef init
            password not-a-token-in-a-macro

            default login anonymous password guest-pw
            """
        #expect(NetrcSecrets.passwords(in: text) == [
            "NETRCPW999", "Ym9iOk5FVFJDUFc5OTk=",  // base64("bob:NETRCPW999"), as curl sends it
            "quoted pass\"word", "YWxpY2U6cXVvdGVkIHBhc3Mid29yZA==",
            "guest-pw", "YW5vbnltb3VzOmd1ZXN0LXB3",
        ])
    }

    @Test func aFileWithoutPasswordsGivesNone() {
        #expect(NetrcSecrets.passwords(in: "machine a.example login bob\n").isEmpty)
        #expect(NetrcSecrets.passwords(in: "").isEmpty)
        #expect(NetrcSecrets.passwords(in: "password").isEmpty, "a last token with no value")
    }

    /// What the redactor made from them masks an echoed password, and the header curl sent.
    @Test func anEchoedPasswordIsMasked() {
        let redactor = Redactor(secrets: NetrcSecrets.passwords(in: "machine h login u password NETRCPW999"))
        #expect(redactor.scrub("401: bad credentials u:NETRCPW999") == "401: bad credentials u:***")
        #expect(redactor.scrub("got Authorization: Basic dTpORVRSQ1BXOTk5") == "got Authorization: Basic ***")
    }
}
