import Testing
@testable import SyncrHTTP

/// The redirect rules as pure logic: one `RedirectState.next` call per hop.
@Suite("RedirectPolicy", .timeLimit(.minutes(10)))
struct RedirectPolicyTests {
    static func request(_ url: String = "https://a.example/file", method: HTTPRequest.Method = .get,
                        body: RequestBody? = nil, policy: RedirectPolicy = RedirectPolicy(),
                        secretHeader: Bool = true) -> HTTPRequest {
        var r = HTTPRequest(method: method, url: url, displayURL: url,
                            headers: [("Authorization", "Bearer t0ken"), ("Cookie", "session=abc"),
                                      ("X-Api-Key", "from-env"), ("Accept", "*/*")],
                            range: ByteRange(start: 100), ifRange: "\"etag\"", body: body)
        r.redirects = policy
        if secretHeader { r.credentialHeaders = ["x-api-key"] }
        return r
    }

    static func followed(_ decision: RedirectDecision) -> HTTPRequest? {
        if case .follow(let next) = decision { return next }
        Issue.record("expected to follow, got \(decision)")
        return nil
    }

    static func refusal(_ decision: RedirectDecision) -> String? {
        if case .refuse(.redirect(_, let message)) = decision { return message }
        Issue.record("expected a refusal, got \(decision)")
        return nil
    }

    static func names(_ r: HTTPRequest) -> [String] { r.headers.map(\.name) }

    @Test("same origin keeps every header, Range and If-Range", arguments: [301, 302, 303, 307, 308])
    func sameOriginKeepsHeaders(status: Int) throws {
        let original = Self.request()
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: status, target: "https://a.example/other")))
        #expect(next.url == "https://a.example/other")
        #expect(Self.names(next) == ["Authorization", "Cookie", "X-Api-Key", "Accept"])
        #expect(next.range == ByteRange(start: 100))
        #expect(next.ifRange == "\"etag\"")
        #expect(next.method == .get)
        #expect(state.hops == 1)
    }

    @Test("another host, port or scheme strips credential headers", arguments: [
        "https://b.example/file", "https://a.example:8443/file", "http://a.example/file",
    ])
    func otherOriginStripsCredentials(target: String) throws {
        let original = Self.request(policy: RedirectPolicy(allowInsecureRedirects: true))
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: 302, target: target)))
        #expect(Self.names(next) == ["Accept"])
        #expect(next.range == ByteRange(start: 100))
    }

    /// A signed object-store request made with temporary credentials carries the session token:
    /// it goes only where the signature does.
    @Test func anObjectStoresSessionTokenStaysAtItsOrigin() throws {
        var original = Self.request(secretHeader: false)
        original.headers = [("Authorization", "AWS4-HMAC-SHA256 Credential=AKIA/..."), ("X-Amz-Date", "20261202T000000Z"),
                            ("X-Amz-Security-Token", "FwoGZXIvYXdzE-session")]
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: 307, target: "https://b.example/f")))
        #expect(Self.names(next) == ["X-Amz-Date"])
    }

    @Test func defaultPortIsTheSameOrigin() throws {
        let original = Self.request("https://a.example/file")
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: 302, target: "https://A.example:443/x")))
        #expect(Self.names(next).contains("Authorization"))
    }

    @Test func trustedRedirectsKeepCredentials() throws {
        let original = Self.request(policy: RedirectPolicy(trustedRedirects: true))
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: 302, target: "https://cdn.example/f")))
        #expect(Self.names(next) == ["Authorization", "Cookie", "X-Api-Key", "Accept"])
    }

    /// A header not marked as coming from ${ENV} and not a credential by name goes everywhere.
    @Test func plainHeaderFollowsAnywhere() throws {
        let original = Self.request(secretHeader: false)
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: 302, target: "https://b.example/f")))
        #expect(Self.names(next) == ["X-Api-Key", "Accept"])
    }

    /// A `Host` written for the entry's server names that server: it goes with the request only
    /// while the chain stays at that origin, trusted or not.
    @Test func aHostHeaderStaysAtItsOrigin() throws {
        var original = Self.request(policy: RedirectPolicy(trustedRedirects: true))
        original.headers.append(("Host", "vhost.example"))
        var state = RedirectState(original)
        let same = try #require(Self.followed(state.next(after: original, status: 302, target: "https://a.example/g")))
        #expect(Self.names(same).contains("Host"))
        let other = try #require(Self.followed(state.next(after: same, status: 302, target: "https://b.example/f")))
        #expect(!Self.names(other).contains("Host") && Self.names(other).contains("Authorization"), "\(Self.names(other))")
    }

    @Test func credentialsComeBackOnlyAtTheirOrigin() throws {
        let original = Self.request()
        var state = RedirectState(original)
        let away = try #require(Self.followed(state.next(after: original, status: 302, target: "https://b.example/1")))
        #expect(!Self.names(away).contains("Authorization"))
        let back = try #require(Self.followed(state.next(after: away, status: 302, target: "https://a.example/2")))
        #expect(Self.names(back).contains("Authorization"))
    }

    @Test func urlCredentialsStayAtTheirOrigin() throws {
        let original = Self.request("https://user:pa55@a.example/file")
        var state = RedirectState(original)
        let same = try #require(Self.followed(state.next(after: original, status: 302, target: "https://a.example/2")))
        #expect(same.url == "https://user:pa55@a.example/2")
        let other = try #require(Self.followed(state.next(after: same, status: 302, target: "https://user:pa55@b.example/3")))
        #expect(other.url == "https://b.example/3")
    }

    @Test func httpsToHttpIsRefusedUnlessAllowed() throws {
        let original = Self.request()
        var state = RedirectState(original)
        let message = try #require(Self.refusal(state.next(after: original, status: 301, target: "http://a.example/file")))
        #expect(message.contains("from https to http://a.example/file"))
        #expect(message.contains("allow_insecure_redirects: true"))

        var allowed = RedirectState(Self.request(policy: RedirectPolicy(allowInsecureRedirects: true)))
        #expect(Self.followed(allowed.next(after: allowed.original, status: 301, target: "http://a.example/file")) != nil)
    }

    @Test("only http and https are followed", arguments: ["ftp://a.example/f", "file:///etc/passwd", "gopher://a.example/"])
    func otherSchemesAreRefused(target: String) throws {
        let original = Self.request()
        var state = RedirectState(original)
        let message = try #require(Self.refusal(state.next(after: original, status: 302, target: target)))
        #expect(message.contains("only http and https redirects are followed"))
    }

    @Test func loopIsDetected() throws {
        let original = Self.request("http://a.example/a")
        var state = RedirectState(original)
        let b = try #require(Self.followed(state.next(after: original, status: 302, target: "http://a.example/b")))
        let message = try #require(Self.refusal(state.next(after: b, status: 302, target: "http://a.example/a")))
        #expect(message == "redirect loop: http://a.example/a was already visited after 2 redirect(s)")
    }

    @Test func aLimitOfOneIsWordedInTheSingular() throws {
        let original = Self.request("http://a.example/0", policy: RedirectPolicy(maxRedirects: 1))
        var state = RedirectState(original)
        let first = try #require(Self.followed(state.next(after: original, status: 302, target: "http://a.example/1")))
        let message = try #require(Self.refusal(state.next(after: first, status: 302, target: "http://a.example/2")))
        #expect(message == "more than 1 redirect (the last to http://a.example/2); raise max_redirects if the chain is expected")
    }

    @Test func limitIsEnforced() throws {
        var current = Self.request("http://a.example/0", policy: RedirectPolicy(maxRedirects: 3))
        var state = RedirectState(current)
        for i in 1...3 {
            current = try #require(Self.followed(state.next(after: current, status: 302, target: "http://a.example/\(i)")))
        }
        let message = try #require(Self.refusal(state.next(after: current, status: 302, target: "http://a.example/4")))
        #expect(message == "more than 3 redirects (the last to http://a.example/4); raise max_redirects if the chain is expected")
    }

    @Test func zeroFollowsNone() throws {
        let original = Self.request(policy: RedirectPolicy(maxRedirects: 0))
        var state = RedirectState(original)
        let message = try #require(Self.refusal(state.next(after: original, status: 302, target: "https://a.example/x?sig=s3cret")))
        #expect(message.contains("max_redirects is 0"))
        // The target's query (presigned URLs carry tokens there) is never shown.
        #expect(!message.contains("s3cret"))
    }

    @Test("non-redirect statuses and a missing Location are delivered", arguments: [(200, "https://a.example/x"), (304, "https://a.example/x"), (300, "https://a.example/x"), (302, nil), (301, "")] as [(Int, String?)])
    func delivered(status: Int, target: String?) {
        let original = Self.request()
        var state = RedirectState(original)
        if case .deliver = state.next(after: original, status: status, target: target) {} else {
            Issue.record("expected .deliver")
        }
    }

    @Test("an upload is re-sent on 307 and 308 to its origin", arguments: [307, 308])
    func uploadFollowsTemporaryAndPermanent(status: Int) throws {
        let original = Self.request(method: .put, body: .file(path: "/tmp/x"))
        var state = RedirectState(original)
        let next = try #require(Self.followed(state.next(after: original, status: status, target: "https://a.example/new")))
        #expect(next.method == .put)
        #expect(next.body == .file(path: "/tmp/x"))
    }

    @Test func uploadBodyIsNotSentToAnotherOrigin() throws {
        let original = Self.request(method: .post, body: .file(path: "/tmp/x"))
        var state = RedirectState(original)
        let message = try #require(Self.refusal(state.next(after: original, status: 307, target: "https://b.example/new")))
        #expect(message.contains("trusted_redirects: true"))
        var trusted = RedirectState(Self.request(method: .post, body: .file(path: "/tmp/x"),
                                                 policy: RedirectPolicy(trustedRedirects: true)))
        #expect(Self.followed(trusted.next(after: trusted.original, status: 307, target: "https://b.example/new")) != nil)
    }

    /// The server took the upload and points at a result: that is the answer, not followed.
    @Test func uploadAnsweredWith303IsDelivered() throws {
        let original = Self.request(method: .post, body: .file(path: "/tmp/x"))
        var state = RedirectState(original)
        guard case .deliver = state.next(after: original, status: 303, target: "https://a.example/result") else {
            Issue.record("a 303 to an upload is its answer")
            return
        }
        #expect(state.hops == 0)
    }

    @Test("an upload answered with 301 or 302 is refused", arguments: [301, 302])
    func uploadRedirectThatWouldDropTheBody(status: Int) throws {
        let original = Self.request(method: .put, body: .file(path: "/tmp/x"))
        var state = RedirectState(original)
        let message = try #require(Self.refusal(state.next(after: original, status: status, target: "https://a.example/new")))
        #expect(message.contains("point to: at the final URL"))
    }
}

@Suite("URLParts", .timeLimit(.minutes(10)))
struct URLPartsTests {
    @Test(arguments: [
        ("https://Example.COM/x", "https://example.com:443"),
        ("http://example.com:80/x", "http://example.com:80"),
        ("http://u:p@127.0.0.1:8080/x?y", "http://127.0.0.1:8080"),
        ("https://[::1]:8443/", "https://[::1]:8443"),
    ])
    func origin(url: String, origin: String) throws {
        #expect(try #require(URLParts(url)).origin == origin)
    }

    @Test func displayDropsCredentialsAndQuery() throws {
        #expect(try #require(URLParts("https://u:secret@h.example:443/p/a?sig=1#f")).display == "https://h.example/p/a")
        #expect(try #require(URLParts("http://h.example:8080/")).display == "http://h.example:8080/")
    }

    @Test("netrc goes only to the origin, like every other credential")
    func netrcStaysWithItsOrigin() throws {
        var original = RedirectPolicyTests.request()
        original.netrc = true
        var state = RedirectState(original)
        let same = try #require(RedirectPolicyTests.followed(state.next(after: original, status: 302, target: "https://a.example/b")))
        #expect(same.netrc)
        let other = try #require(RedirectPolicyTests.followed(state.next(after: same, status: 302, target: "https://b.example/c")))
        #expect(!other.netrc, "curl would send a netrc 'default' entry to any host")
        let back = try #require(RedirectPolicyTests.followed(state.next(after: other, status: 302, target: "https://a.example/d")))
        #expect(back.netrc)
    }

    @Test("insecure: true is for the entry's own server, not for where it redirects")
    func insecureStaysWithItsOrigin() throws {
        var original = RedirectPolicyTests.request()
        original.tls.verify = false
        var state = RedirectState(original)
        let same = try #require(RedirectPolicyTests.followed(state.next(after: original, status: 302, target: "https://a.example/b")))
        #expect(!same.tls.verify)
        let other = try #require(RedirectPolicyTests.followed(state.next(after: same, status: 302, target: "https://cdn.example/c")))
        #expect(other.tls.verify)
    }

    @Test("a loop is found when the manifest URL carries user:password")
    func loopWithCredentialsInTheURL() throws {
        let original = RedirectPolicyTests.request("https://bob:pw@a.example/file")
        var state = RedirectState(original)
        let next = try #require(RedirectPolicyTests.followed(state.next(after: original, status: 302, target: "https://b.example/x")))
        let message = try #require(RedirectPolicyTests.refusal(state.next(after: next, status: 302, target: "https://a.example/file")))
        #expect(message.contains("redirect loop"))
        #expect(!message.contains("pw"))
    }
}
