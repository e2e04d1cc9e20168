import Foundation
import Testing
import SyncrS3

/// Signatures botocore (the AWS CLI) computes for the S3 requests syncr sends
/// (Fixtures/botocore-s3-signatures.json, made by scripts/s3-fixtures.py): the same URL, the
/// same canonical request, the same `Authorization` header.
@Suite(.timeLimit(.minutes(10))) struct BotocoreSignatureTests {
    static var fixture: [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/botocore-s3-signatures.json")
        return (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [String: Any] ?? [:]
    }
    static var cases: [[String: Any]] { fixture["cases"] as? [[String: Any]] ?? [] }
    static var names: [String] { cases.map { $0["name"] as! String } }

    @Test func theFixtureIsThere() {
        #expect(Self.cases.count >= 11)
    }

    @Test(arguments: names)
    func signsLikeBotocore(name: String) throws {
        let c = try #require(Self.cases.first { $0["name"] as? String == name })
        let pairs = { (key: String) in (c[key] as! [[String]]).map { (name: $0[0], value: $0[1]) } }
        let endpoint = S3Endpoint(url: c["endpoint"] as? String, region: c["region"] as! String,
                                  pathStyle: c["pathStyle"] as! Bool)
        let target = endpoint.request(bucket: c["bucket"] as! String, key: c["key"] as! String, query: pairs("query"))
        #expect(target.url.prefix { $0 != "?" } == c["url"] as! String)
        let credentials = S3Credentials(accessKeyID: Self.fixture["accessKeyId"] as! String,
                                        secretAccessKey: Self.fixture["secretAccessKey"] as! String,
                                        sessionToken: c["sessionToken"] as! Bool ? Self.fixture["sessionToken"] as? String : nil,
                                        source: "test")
        let signer = SigV4(credentials: credentials, region: endpoint.region)
        let request = SignableRequest(method: c["method"] as! String, host: target.host, path: target.path,
                                      query: pairs("query"), headers: pairs("headers"),
                                      payloadHash: c["payloadHash"] as! String)
        let time = SigV4TestSuiteTests.Vector.epoch(Self.isoTime(Self.fixture["timestamp"] as! String))
        let added = signer.sign(request, at: time)
        var signed = request
        signed.headers += added.filter { $0.name != "Authorization" }
        #expect(signer.canonicalRequest(signed).text == c["canonicalRequest"] as! String)
        #expect(added.first { $0.name == "Authorization" }?.value == c["authorization"] as? String)
    }

    /// The cases cover what the issue asks for.
    @Test func casesCoverRangesKeysQueriesTokensAndPayloads() {
        let all = Self.cases
        #expect(all.contains { ($0["headers"] as! [[String]]).contains { $0[0] == "Range" } })
        #expect(all.contains { ($0["key"] as! String).contains(" ") && ($0["key"] as! String).unicodeScalars.contains { $0.value > 0x7f } })
        #expect(all.contains { !($0["query"] as! [[String]]).isEmpty })
        #expect(all.contains { $0["sessionToken"] as! Bool })
        #expect(all.contains { $0["payloadHash"] as! String == SigV4.unsignedPayload })
        #expect(all.contains { ($0["payloadHash"] as! String).count == 64 && $0["payloadHash"] as! String != SigV4.emptyPayloadHash })
    }

    static func isoTime(_ stamp: String) -> String {
        let s = Array(stamp)
        return "\(String(s[0..<4]))-\(String(s[4..<6]))-\(String(s[6..<8]))T\(String(s[9..<11])):\(String(s[11..<13])):\(String(s[13..<15]))Z"
    }
}
