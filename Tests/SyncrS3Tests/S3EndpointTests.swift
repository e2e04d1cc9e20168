import Testing
import SyncrDigest
import SyncrS3

@Suite(.timeLimit(.minutes(10))) struct S3EndpointTests {
    /// A bucket with a dot goes path-style even where virtual-hosted is asked for: `a.b.s3...`
    /// would not match the wildcard certificate `*.s3.<region>.amazonaws.com`.
    @Test func dottedBucketGoesPathStyle() {
        let endpoint = S3Endpoint(url: nil, region: "eu-west-1", pathStyle: false)
        let target = endpoint.request(bucket: "my.bucket", key: "a b")
        #expect(target.url == "https://s3.eu-west-1.amazonaws.com/my.bucket/a%20b")
        #expect(target.host == "s3.eu-west-1.amazonaws.com")
    }

    /// Older buckets (and other stores) allow capitals and `_`, which no host name holds: DNS
    /// ignores case, so `My_Bucket.s3...` would name no bucket, and `MyBucket.s3...` another
    /// one (`mybucket`). They go path-style; a plain name stays virtual-hosted.
    @Test(arguments: [("MyBucket", false), ("my_bucket", false), ("-bucket", false), ("bucket-", false),
                      ("my-bucket-01", true), ("abc", true)])
    func bucketThatIsNoHostNameGoesPathStyle(bucket: String, virtualHosted: Bool) {
        let target = S3Endpoint(url: nil, region: "us-east-1", pathStyle: false).request(bucket: bucket, key: "k")
        if virtualHosted {
            #expect(target.url == "https://\(bucket).s3.us-east-1.amazonaws.com/k")
            #expect(target.host == "\(bucket).s3.us-east-1.amazonaws.com")
        } else {
            #expect(target.url == "https://s3.us-east-1.amazonaws.com/\(bucket)/k")
            #expect(target.host == "s3.us-east-1.amazonaws.com")
        }
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

/// The XML answers syncr reads: error documents, ListParts pages and their entities.
@Suite(.timeLimit(.minutes(10))) struct S3XMLTests {
    @Test func errorDocument() throws {
        let error = try #require(S3ErrorResponse(parsing: "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key &amp; &lt;more&gt;</Message></Error>"))
        #expect(error == S3ErrorResponse(code: "NoSuchKey", message: "The key & <more>"))
        #expect(S3ErrorResponse(parsing: "<html>503</html>") == nil)
    }

    /// SeaweedFS (Go's encoder) writes quotes as `&#34;`; S3 as `&quot;`. A part listed twice
    /// keeps the newest copy.
    @Test func listPartsPagesAndDuplicates() throws {
        let xml = """
            <ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>\
            <Part><ETag>&#34;aaa&#34;</ETag><LastModified>2026-11-30T19:59:47Z</LastModified><PartNumber>1</PartNumber><Size>5</Size></Part>\
            <Part><ETag>&quot;bbb&quot;</ETag><LastModified>2026-11-30T19:59:50Z</LastModified><PartNumber>2</PartNumber><Size>5</Size></Part>\
            <Part><ETag>&#x22;ccc&#x22;</ETag><LastModified>2026-11-30T19:59:49Z</LastModified><PartNumber>2</PartNumber><Size>5</Size></Part>\
            </ListPartsResult>
            """
        let page = try #require(ListPartsPage(parsing: xml))
        #expect(page.nextMarker == "2")
        #expect(page.parts.map(\.etag) == ["aaa", "bbb", "ccc"])
        let newest = ListPartsPage.newest(page.parts)
        #expect(newest[2]?.etag == "bbb")
        #expect(newest[1]?.etag == "aaa")
        #expect(page.parts.allSatisfy { $0.checksumSHA256 == nil }, "SeaweedFS lists no part checksums")
    }

    /// S3 lists each part's SHA-256 for an upload created with that checksum.
    @Test func listPartsGivesEachPartsChecksum() throws {
        let xml = """
            <ListPartsResult><ChecksumAlgorithm>SHA256</ChecksumAlgorithm><IsTruncated>false</IsTruncated>            <Part><PartNumber>1</PartNumber><ETag>&quot;aaa&quot;</ETag><ChecksumSHA256>n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=</ChecksumSHA256>            <Size>5</Size></Part></ListPartsResult>
            """
        let page = try #require(ListPartsPage(parsing: xml))
        #expect(page.parts.map(\.checksumSHA256) == ["n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="])
    }

    /// Parts in order, each with the SHA-256 it was sent with; an ETag (the store's own text)
    /// escaped.
    @Test func completionBody() {
        let parts: [ListPartsPage.CompletedPart] = [.init(number: 2, etag: "b", sha256: "Yg=="), .init(number: 1, etag: "a&<x>")]
        #expect(ListPartsPage.completion(parts) == "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + "<Part><PartNumber>1</PartNumber><ETag>\"a&amp;&lt;x&gt;\"</ETag></Part>"
            + "<Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag><ChecksumSHA256>Yg==</ChecksumSHA256></Part></CompleteMultipartUpload>")
        #expect(ListPartsPage.uploadID("<InitiateMultipartUploadResult><UploadId>abc_1</UploadId></InitiateMultipartUploadResult>") == "abc_1")
    }
}
