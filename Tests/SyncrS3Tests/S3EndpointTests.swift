import Testing
import SyncrDigest
import SyncrS3

@Suite(.timeLimit(.minutes(1))) struct S3EndpointTests {
    /// A bucket with a dot goes path-style even where virtual-hosted is asked for: `a.b.s3...`
    /// would not match the wildcard certificate `*.s3.<region>.amazonaws.com`.
    @Test func dottedBucketGoesPathStyle() {
        let endpoint = S3Endpoint(url: nil, region: "eu-west-1", pathStyle: false)
        let target = endpoint.request(bucket: "my.bucket", key: "a b")
        #expect(target.url == "https://s3.eu-west-1.amazonaws.com/my.bucket/a%20b")
        #expect(target.host == "s3.eu-west-1.amazonaws.com")
    }

    @Test func defaultPortIsLeftOutOfTheHost() {
        let target = S3Endpoint(url: "http://Store.Example:80/", region: "r", pathStyle: true).request(bucket: "bkt", key: "k")
        #expect(target.host == "store.example")
        #expect(target.url == "http://store.example/bkt/k")
    }

    @Test func hmacMatchesRFC4231() {
        // RFC 4231, test case 2.
        let mac = HMAC.sha256(key: Array("Jefe".utf8), "what do ya want for nothing?")
        #expect(hexString(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
