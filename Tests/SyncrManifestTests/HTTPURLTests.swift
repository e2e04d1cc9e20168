import Testing
@testable import SyncrManifest

/// What a download's `url:` must look like to reach curl: an absolute http(s) URL with a host, a
/// port of at most 65535 when given, and no whitespace or control characters.
@Suite(.timeLimit(.minutes(5))) struct HTTPURLTests {
    @Test(arguments: ["http://h", "HTTPS://h:443/p?q=1#f", "http://user:pw@h:8080/", "http://[::1]:80/", "http://[::1]",
                      "http://h:/", "https://ü.example/ä", "http://a@b@h:1/", "http://h:65535", "http://h:0080/x"])
    func accepted(url: String) {
        #expect(HTTPSyntax.isHTTPURL(url), "\(url)")
    }

    @Test(arguments: ["ftp://h", "http:/h", "http://", "http://:80", "http://h:65536", "http://h:8a", "http://[::1",
                      "http://[::1]x", "http://h h", "http://h\u{7F}", "httpx://h", " http://h", "http://@/", "http:h",
                      "http://h:99999999999999999999999", "", "h", "http//h", "http://h\t/"])
    func refused(url: String) {
        #expect(!HTTPSyntax.isHTTPURL(url), "\(url)")
    }
}
