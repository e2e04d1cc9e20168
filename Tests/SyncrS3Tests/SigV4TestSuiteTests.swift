#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import SyncrS3

/// AWS's published Signature Version 4 test vectors (Fixtures/aws-signing-test-suite): the
/// canonical request, string to sign and signature of each must match to the byte.
@Suite(.timeLimit(.minutes(10))) struct SigV4TestSuiteTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/aws-signing-test-suite")
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.contains(".") && $0 != "LICENSE" }.sorted()

    @Test func theSuiteIsThere() {
        #expect(Self.cases.count >= 19)
    }

    @Test(arguments: cases)
    func signsLikeTheSuite(name: String) throws {
        let vector = try Vector(folder: Self.folder.appendingPathComponent(name))
        let added = vector.signer.sign(vector.request, at: vector.time)
        var signed = vector.request
        signed.headers += added.filter { $0.name != "Authorization" }
        let canonical = vector.signer.canonicalRequest(signed).text
        #expect(canonical == vector.expected("header-canonical-request.txt"))
        let stamp = SigV4.timestamp(vector.time)
        #expect(vector.signer.stringToSign(canonical: canonical, timestamp: stamp) == vector.expected("header-string-to-sign.txt"))
        let authorization = try #require(added.first { $0.name == "Authorization" }?.value)
        #expect(authorization.hasSuffix("Signature=" + vector.expected("header-signature.txt")))
    }

    /// One case of the suite: its context and its request.
    struct Vector {
        var folder: URL
        var signer: SigV4
        var request: SignableRequest
        var time: Int

        init(folder: URL) throws {
            self.folder = folder
            let context = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("context.json"))) as! [String: Any]
            let keys = context["credentials"] as! [String: String]
            signer = SigV4(credentials: S3Credentials(accessKeyID: keys["access_key_id"]!, secretAccessKey: keys["secret_access_key"]!,
                                                      sessionToken: keys["token"], source: "test"),
                           region: context["region"] as! String, service: context["service"] as! String)
            time = Self.epoch(context["timestamp"] as! String)
            request = try Self.parse(String(contentsOf: folder.appendingPathComponent("request.txt"), encoding: .utf8))
        }

        func expected(_ file: String) -> String {
            (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? "(missing \(file))"
        }

        /// `GET /path?query HTTP/1.1`, then `Name:value` lines; the path and query are raw text.
        static func parse(_ text: String) throws -> SignableRequest {
            var lines = text.components(separatedBy: "\n")
            let first = lines.removeFirst()
            let method = String(first.prefix { $0 != " " })
            let target = String(first.dropFirst(method.count + 1).dropLast(" HTTP/1.1".count))
            let path = String(target.prefix { $0 != "?" })
            let queryText = target.dropFirst(path.count + 1)
            let query: [(name: String, value: String)] = queryText.isEmpty ? [] : queryText.split(separator: "&").map { pair in
                let name = String(pair.prefix { $0 != "=" })
                return (name: URIEncoding.decode(name)!, value: URIEncoding.decode(String(pair.dropFirst(name.count + 1)))!)
            }
            var host = ""
            var headers: [(name: String, value: String)] = []
            for line in lines where !line.isEmpty {
                let name = String(line.prefix { $0 != ":" })
                let value = String(line.dropFirst(name.count + 1))
                if name.lowercased() == "host" { host = value } else { headers.append((name, value)) }
            }
            return SignableRequest(method: method, host: host, path: URIEncoding.encode(path, keepSlash: true),
                                   query: query, headers: headers)
        }

        static func epoch(_ iso: String) -> Int {
            // 2015-08-30T12:36:00Z
            let n = iso.split(whereSeparator: { "-T:Z".contains($0) }).map { Int32($0)! }
            var parts = tm()
            (parts.tm_year, parts.tm_mon, parts.tm_mday) = (n[0] - 1900, n[1] - 1, n[2])
            (parts.tm_hour, parts.tm_min, parts.tm_sec) = (n[3], n[4], n[5])
            return timegm(&parts)
        }
    }
}
