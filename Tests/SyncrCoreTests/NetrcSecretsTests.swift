import Foundation
import SyncrHTTP
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

    /// curl turns `\n`, `\r` and `\t` in a quoted token into those characters: the password it
    /// sends is that, and the one masked must be too (`TAB\tPW5` leaked as `TAB<tab>PW5`).
    @Test func quotedEscapesAreReadAsCurlReadsThem() {
        let found = NetrcSecrets.passwords(in: #"machine h login u password "TAB\tPW5\n\r\q""#)
        #expect(found.first == "TAB\tPW5\n\rq", "\(found)")
        #expect(found.last == Data("u:TAB\tPW5\n\rq".utf8).base64EncodedString(), "\(found)")
    }

    /// An echoing server's answer is quoted with its tabs and newlines as spaces: a password
    /// holding one is masked there too.
    @Test func aPasswordWithATabIsMaskedAsAnAnswerQuotesIt() {
        let redactor = Redactor(secrets: NetrcSecrets.passwords(in: #"machine h login u password "TAB\tPW5""#))
        #expect(redactor.scrub(HTTPResponse.printable(Array("you sent u:TAB\tPW5\n".utf8))) == "you sent u:***")
        #expect(redactor.scrub("you sent u:TAB\tPW5") == "you sent u:***")
    }

    /// A file that is not UTF-8 throughout (a comment in Latin-1) is read by curl all the same:
    /// its passwords were not masked at all. The pair curl sends is encoded from the bytes.
    @Test func aFileThatIsNotUTF8GivesItsPasswords() {
        let bytes = Array("# Ren".utf8) + [0xE9] + Array("s laptop\nmachine h login u password LEAKPW77 ".utf8)
            + Array("machine k login v password p".utf8) + [0xE9]
        let found = NetrcSecrets.passwords(in: bytes)
        #expect(found.contains("LEAKPW77") && found.contains(Data("u:LEAKPW77".utf8).base64EncodedString()), "\(found)")
        #expect(found.contains(Data(Array("v:p".utf8) + [0xE9]).base64EncodedString()), "\(found)")
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

/// A proxy's password from the environment is sent to it (`Proxy-Authorization: Basic`), and a
/// proxy that echoes the request in an error page would have it printed.
@Suite(.timeLimit(.minutes(10))) struct ProxySecretsTests {
    @Test func everyProxyVariablesPasswordAndBasicFormAreSecrets() {
        let environment = ["http_proxy": "http://puser:PROXYPASS-SECRET@127.0.0.1:3128",
                           "HTTPS_PROXY": "alice:p%40ss-word@proxy.example:8080",
                           "all_proxy": "socks5://proxy.example:1080"]
        let found = ProxySecrets.passwords { environment[$0] }
        #expect(found.contains("PROXYPASS-SECRET"))
        #expect(found.contains("cHVzZXI6UFJPWFlQQVNTLVNFQ1JFVA=="), "base64(puser:PROXYPASS-SECRET): \(found)")
        #expect(found.contains("p%40ss-word") && found.contains("p@ss-word"), "\(found)")
        #expect(ProxySecrets.passwords { _ in nil }.isEmpty)
    }
}
