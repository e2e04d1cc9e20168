import Foundation
import Testing

/// The store the s3:// tests run against behaves as they assume: it takes the AWS CLI's signed
/// requests with the test credentials, and refuses a wrong secret.
@Suite(.timeLimit(.minutes(5))) struct SeaweedFSSelfTests {
    @Test func acceptsTheTestCredentialsAndRefusesOthers() async throws {
        let server = try await SeaweedFS.shared.start()
        let folder = try TemporaryDirectory(prefix: "s3-self")
        let file = folder.appending("f.bin")
        try Data((0..<70_000).map { UInt8($0 % 251) }).write(to: file)
        let key = SeaweedFS.uniquePrefix("self") + "f.bin"
        let aws = AWSCLI(server: server)
        let put = try await aws.run(["s3", "cp", "--only-show-errors", file.path, "s3://syncr-test/\(key)"])
        #expect(put.exitCode == 0, "\(put)")
        let head = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", key])
        #expect(head.stdout.contains("\"ContentLength\": 70000"), "\(head)")
        let refused = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", key],
                                        environment: ["AWS_SECRET_ACCESS_KEY": "wrong-secret"])
        #expect(refused.exitCode != 0)
        #expect(refused.stderr.contains("403"), "\(refused)")
    }

    /// The store checks Content-MD5 (so the uploads' integrity checks are real here): a PUT whose
    /// header does not match its body is refused with BadDigest.
    @Test func refusesABodyThatDoesNotMatchItsContentMD5() async throws {
        let server = try await SeaweedFS.shared.start()
        let folder = try TemporaryDirectory(prefix: "s3-md5")
        let file = folder.appending("f.txt")
        try Data("the body\n".utf8).write(to: file)
        let key = SeaweedFS.uniquePrefix("md5") + "f.txt"
        // The MD5 of the empty string, not of the body.
        let put = try await AWSCLI(server: server).run(["s3api", "put-object", "--bucket", "syncr-test", "--key", key,
                                                        "--body", file.path, "--content-md5", "1B2M2Y8AsgTpgAmY7PhCfg=="])
        #expect(put.exitCode != 0)
        #expect(put.stderr.contains("BadDigest") || put.stderr.contains("InvalidDigest"), "\(put.stderr)")
    }
}
