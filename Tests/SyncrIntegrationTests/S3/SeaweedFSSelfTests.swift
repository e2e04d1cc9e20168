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
}
