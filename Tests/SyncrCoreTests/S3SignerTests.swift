import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// The signing step of `RequestBuilder.finish` for `s3://` requests.
@Suite(.timeLimit(.minutes(10))) struct S3SignerTests {
    static let object = S3Object(
        location: S3Location(bucket: "bucket", key: "dir/a b.txt"),
        configuration: S3Configuration(endpoint: S3Endpoint(url: "http://127.0.0.1:8333", region: "us-east-1", pathStyle: true),
                                       credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret-key",
                                                                  sessionToken: "token-1", source: "test")))

    func values(_ request: HTTPRequest, _ name: String) -> [String] {
        request.headers.filter { $0.name.lowercased() == name }.map(\.value)
    }

    /// A retry signs again: the earlier signature is replaced, not added to, and the caller's
    /// payload hash is kept.
    @Test func signingAgainReplacesTheSignature() {
        let put = HTTPRequest(method: .put, url: Self.object.url(), displayURL: "s3://bucket/dir/a b.txt",
                              headers: [("X-Amz-Content-SHA256", String(repeating: "a", count: 64))], body: .file(path: "/dev/null"))
        let once = Self.object.sign(put)
        let twice = Self.object.sign(once)
        for name in ["authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"] {
            #expect(values(twice, name).count == 1, "\(name)")
        }
        #expect(values(twice, "x-amz-content-sha256") == [String(repeating: "a", count: 64)])
        #expect(values(twice, "authorization")[0].contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token"))
        #expect(Self.object.url() == "http://127.0.0.1:8333/bucket/dir/a%20b.txt")
    }

    /// No body: the hash of no bytes; a body without a given hash: UNSIGNED-PAYLOAD.
    @Test func payloadHashByKindOfRequest() {
        let get = Self.object.sign(HTTPRequest(url: Self.object.url(), displayURL: "x"))
        #expect(values(get, "x-amz-content-sha256") == [SigV4.emptyPayloadHash])
        let put = Self.object.sign(HTTPRequest(method: .put, url: Self.object.url(), displayURL: "x", body: .file(path: "/dev/null")))
        #expect(values(put, "x-amz-content-sha256") == [SigV4.unsignedPayload])
    }

    /// `anonymous: true` (no credentials): requests go out as they are, unsigned.
    @Test func anAnonymousStoreSignsNothing() {
        let anonymous = S3Object(location: Self.object.location, configuration: S3Configuration(
            endpoint: Self.object.configuration.endpoint, credentials: nil))
        let get = HTTPRequest(url: anonymous.url(), displayURL: "s3://bucket/dir/a b.txt", headers: [("Range", "bytes=0-9")])
        let sent = anonymous.sign(get)
        #expect(sent.headers.map(\.name) == ["Range"])
        for name in ["authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"] {
            #expect(values(sent, name).isEmpty, "\(name)")
        }
    }

    /// A key is sent as written, dot segments and all, signed or not: curl resolved `a/../b`
    /// after the signature covered it.
    @Test func everyStoreRequestKeepsItsPathAsItIs() {
        let request = HTTPRequest(url: Self.object.url(key: "a/../b.txt"), displayURL: "x")
        #expect(!request.pathAsIs)
        #expect(Self.object.sign(request).pathAsIs)
        let anonymous = S3Object(location: Self.object.location, configuration: S3Configuration(
            endpoint: Self.object.configuration.endpoint, credentials: nil))
        #expect(anonymous.sign(request).pathAsIs)
    }

    @Test func splitsWhatURLMade() {
        let url = Self.object.url(key: "k", query: [("uploadId", "a/b+c"), ("partNumber", "3")])
        let (host, path, query) = S3Object.split(url)
        #expect(host == "127.0.0.1:8333")
        #expect(path == "/bucket/k")
        #expect(query.map { "\($0.name)=\($0.value)" } == ["uploadId=a/b+c", "partNumber=3"])
    }
}
