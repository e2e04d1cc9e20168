import Testing
@testable import SyncrManifest

/// Tokens in query strings (`?token=`, presigned `X-Amz-Signature=`, `sig=`, `api_key=`) are
/// masked wherever a URL is shown, like passwords in the user information.
@Suite(.timeLimit(.minutes(10))) struct QueryCredentialsTests {
    @Test(arguments: [
        ("https://h/x?token=abc&v=1", "https://h/x?token=***&v=1"),
        ("https://h/x?access_token=abc#part", "https://h/x?access_token=***#part"),
        ("https://h/x?sig=${SIG}&flag", "https://h/x?sig=${SIG}&flag"),
        ("https://h/x?api_key=k1", "https://h/x?api_key=***"),
        ("https://h/releases/v1.2/tool.tar.gz?version=2&arch=x86_64", "https://h/releases/v1.2/tool.tar.gz?version=2&arch=x86_64"),
        ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F2026&X-Amz-Signature=9f86d0",
         "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***"),
        // In running text: a message quoting a URL, a server's words, a redirect's target.
        // (A value runs to a space, `&`, `#`, a quote or a bracket: a colon inside it belongs to
        // it, one at its end to the message, which goes on after the URL with ": ".)
        ("GET https://h/x?token=abc: 403 (see \"https://h/y?sig=zz\")", "GET https://h/x?token=***: 403 (see \"https://h/y?sig=***\")"),
        ("https://h/x?auth=user:secret: HTTP 404", "https://h/x?auth=***: HTTP 404"),
        // A fragment's and a path parameter's pairs too: OAuth's #access_token=, ;jsessionid=.
        ("https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=***&state=1"),
        ("https://h/app;jsessionid=ABC123?x=1", "https://h/app;jsessionid=***"),
        ("redirected to <https://cdn/f?Signature=a+b/c=&Expires=1>", "redirected to <https://cdn/f?Signature=***&Expires=1>"),
        // Nothing to mask: no value, no name, no credential, already masked.
        ("https://h/x?token=&code", "https://h/x?token=&code"),
        ("https://h/x?=abc&&", "https://h/x?=abc&&"),
        ("a?b=c & d=e", "a?b=c & d=e"),
        ("https://h/x?token=***", "https://h/x?token=***"),
        ("", ""),
        ("?", "?"),
        ("&token=", "&token="),
        ("üñí?tökén=1&session=ß", "üñí?tökén=1&session=***"),
    ])
    func masked(text: String, shown: String) {
        #expect(QueryCredentials.masked(text) == shown)
        #expect(URLCredentials.masked(text) == shown, "the one masking every output goes through")
    }

    /// A URL carried in another parameter's value (a redirect's `?to=`, a login's `?next=`, a
    /// server's error message quoting the request) carries its own query: a credential there is
    /// masked by its name too, percent-encoded once, twice or not at all, and the mask keeps
    /// the encoding around it so the reader still sees which parameter it was.
    @Test(arguments: [
        ("https://host/dl?to=https%3A%2F%2Fcdn.example%2Ff%3Ftoken%3DSECRET123%26x%3D1",
         "https://host/dl?to=https%3A%2F%2Fcdn.example%2Ff%3Ftoken%3D***%26x%3D1"),
        ("https://host/login?next=%2Fpath%3Fapi_key%3DSECRET", "https://host/login?next=%2Fpath%3Fapi_key%3D***"),
        ("https://host/login?next=%2fpath%3fapi_key%3dSECRET&v=1", "https://host/login?next=%2fpath%3fapi_key%3d***&v=1"),
        // Encoded twice: a URL in a URL in a URL. The token's own `%2F` is `%252F` at depth 1,
        // and a value at depth 2 ends at an `&` of depth 2 or less.
        ("https://a/r?u=https%3A%2F%2Fb%2Fdl%3Fto%3Dhttps%253A%252F%252Fcdn%252Ff%253Ftoken%253DSECRET123%2526x%253D1%26y%3D2",
         "https://a/r?u=https%3A%2F%2Fb%2Fdl%3Fto%3Dhttps%253A%252F%252Fcdn%252Ff%253Ftoken%253D***%2526x%253D1%26y%3D2"),
        ("https://a/r?to=%2Ff%3Fsig%3DAB%252FCD%26v%3D2&w=3", "https://a/r?to=%2Ff%3Fsig%3D***%26v%3D2&w=3"),
        ("https://a/r?to=%2Ff%253Fsig%253DAB%26v%3D2", "https://a/r?to=%2Ff%253Fsig%253D***%26v%3D2"),
        // Not encoded: everything after the first `?` is the outer query, so the token is a
        // parameter after `&`, or sits after a `?` inside the value.
        ("https://host/dl?to=https://cdn/f?token=SECRET&x=1", "https://host/dl?to=https://cdn/f?token=***&x=1"),
        ("https://host/dl?to=https://cdn/f?x=1&token=SECRET", "https://host/dl?to=https://cdn/f?x=1&token=***"),
        ("https://host/dl?to=https://cdn/f;jsessionid=ABC?v=1", "https://host/dl?to=https://cdn/f;jsessionid=***"),
        // In running text, and the fragment of a URL in a value.
        ("GET https://h/dl?to=%2Ff%3Ftoken%3DSECRET: HTTP 403", "GET https://h/dl?to=%2Ff%3Ftoken%3D***: HTTP 403"),
        ("error=bad%20url%20%2Ff%3Ftoken%3Dabc%20refused", "error=bad%20url%20%2Ff%3Ftoken%3D***%20refused"),
        ("https://h/cb?to=%2Fapp%23access_token%3Dabc%26state%3D1", "https://h/cb?to=%2Fapp%23access_token%3D***%26state%3D1"),
        // Nothing to mask: innocent names, no value, already masked, a `%` that is no mark.
        ("https://host/dl?to=https%3A%2F%2Fcdn%2Ff%3Fversion%3D2%26arch%3Dx86_64",
         "https://host/dl?to=https%3A%2F%2Fcdn%2Ff%3Fversion%3D2%26arch%3Dx86_64"),
        ("https://host/dl?to=https://cdn/f?version=2", "https://host/dl?to=https://cdn/f?version=2"),
        ("https://host/dl?to=%2Ff%3Ftoken%3D%26v%3D1", "https://host/dl?to=%2Ff%3Ftoken%3D%26v%3D1"),
        ("https://host/dl?to=%2Ff%3Ftoken%3D***", "https://host/dl?to=%2Ff%3Ftoken%3D***"),
        ("100% done, 50%3F, %3F%3D, %2", "100% done, 50%3F, %3F%3D, %2"),
    ])
    func nestedURLCredentialsAreMasked(text: String, shown: String) {
        #expect(QueryCredentials.masked(text) == shown)
        #expect(QueryCredentials.masked("é " + text) == "é " + shown, "non-ASCII text is scanned another way")
        #expect(URLCredentials.masked(text) == shown, "the one masking every output goes through")
        #expect(QueryCredentials.masked(shown) == shown, "masking twice changes nothing")
    }

    /// A token written into a nested URL of a manifest's URL is a secret like any other: a
    /// server may echo it decoded.
    @Test func nestedValuesAreSecretsAsWrittenAndDecoded() {
        let secrets = QueryCredentials.secrets(in: "https://h/dl?to=%2Ff%3Ftoken%3Dabcd%252Fefgh1234%26v%3D123456789")
        #expect(Set(secrets) == ["abcd%252Fefgh1234", "abcd%2Fefgh1234", "abcd/efgh1234"])
    }

    /// ASCII text is scanned byte by byte, other text character by character: both give the
    /// same masks (a non-ASCII word in front sends the same text down the other path).
    @Test(arguments: [
        "https://h/x?token=abc&v=1", "https://h/x?access_token=abc#part",
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F2026&X-Amz-Signature=9f86d0",
        "GET https://h/x?token=abc: 403 (see \"https://h/y?sig=zz\")",
        "x?API_KEY=v1\tx?Session=v2\r\nx?PassWord=v3 x?[k]=v4", "?TOKEN=a(b)c`d'e<f>g",
    ])
    func asciiAndOtherTextMaskAlike(text: String) {
        #expect(QueryCredentials.masked("é " + text) == "é " + QueryCredentials.masked(text))
        #expect(QueryCredentials.masked(text) != text)
    }

    @Test func credentialNamesMatchInAnyCase() {
        #expect(QueryCredentials.isCredential(name: "X-Amz-SIGNATURE"))
        #expect(QueryCredentials.isCredential(name: "myApiKey"))
        #expect(QueryCredentials.isCredential(name: "sig"))
        #expect(!QueryCredentials.isCredential(name: "si"))
        #expect(!QueryCredentials.isCredential(name: "version"))
        #expect(!QueryCredentials.isCredential(name: "tökén"))
        #expect(!QueryCredentials.isCredential(name: ""))
    }

    /// Credential parameters found in the wild beyond the obvious names: a JWT, meeting and
    /// appliance passwords (`pwd`, `pw`), CAS and Jenkins tickets, one-time codes, HMACs.
    /// The short names count only whole: `pw` is in `upward`, `sid` in `inside`.
    @Test func lessObviousCredentialNamesAreMasked() {
        let url = "http://h/a.txt?jwt=eyJhbGciOiJIUzI1NiJ9.payload.sig&pwd=hunter2hunter2&pw=p4ssw0rd99&ticket=ST-12345-abcdef"
            + "&otp=123456&hmac=ab12&sid=s1&upward=1&inside=2"
        #expect(QueryCredentials.masked(url)
            == "http://h/a.txt?jwt=***&pwd=***&pw=***&ticket=***&otp=***&hmac=***&sid=***&upward=1&inside=2")
        #expect(QueryCredentials.secrets(in: url).contains("hunter2hunter2"))
    }

    @Test func userInformationAndQueryTogether() {
        #expect(URLCredentials.masked("https://u:pw12@h/x?api_key=k1") == "https://u:***@h/x?api_key=***")
    }

    @Test func longValuesAreSecretsAsWrittenAndDecoded() {
        let secrets = QueryCredentials.secrets(in: "https://h/x?token=short&api_key=abcd%2Fefgh1234&sig=${SIG}&v=123456789")
        #expect(Set(secrets) == ["abcd%2Fefgh1234", "abcd/efgh1234"])
    }

    /// A token written into a manifest's URL is a secret: the run masks it wherever it appears
    /// (a server echoing it in an error page, say), not only in the URL.
    @Test func aLiteralTokenInAManifestURLIsASecret() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: "https://example.com/a?X-Amz-Signature=0123456789abcdef&v=1", to: a }
              - { url: "https://example.com/b?token=${TOKEN}", to: b }
            """, environment: ["TOKEN": "from-the-environment"])
        #expect(Set(manifest.secrets) == ["0123456789abcdef", "from-the-environment"])
    }

    /// The source line quoted under a manifest error masks a token written in a URL.
    @Test func diagnosticMasksAQueryToken() {
        let text = errors("""
            version: 1
            downloads:
              - { url: "https://example.com/a?access_token=hunter22hunter22", to: a, sha256: x }
            """)
        #expect(text.contains("https://example.com/a?access_token=***"), "\(text)")
        #expect(!text.contains("hunter22"))
    }
}
