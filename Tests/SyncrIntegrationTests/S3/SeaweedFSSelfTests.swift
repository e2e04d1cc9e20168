import Foundation
@testable import SyncrCore
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

    /// The store checks a part's `x-amz-checksum-sha256` (so a multipart upload's integrity
    /// check is real here): a part whose header is the SHA-256 of other bytes is refused, and
    /// one with its own is taken.
    @Test func refusesAPartThatDoesNotMatchItsSHA256() async throws {
        let server = try await SeaweedFS.shared.start()
        let folder = try TemporaryDirectory(prefix: "s3-part-sha")
        let file = folder.appending("part.bin")
        let bytes = Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: file)
        let key = SeaweedFS.uniquePrefix("part-sha") + "f.bin"
        let aws = AWSCLI(server: server)
        let created = try await aws.run(["s3api", "create-multipart-upload", "--bucket", "syncr-test", "--key", key,
                                         "--checksum-algorithm", "SHA256", "--query", "UploadId", "--output", "text"])
        let uploadID = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(created.exitCode == 0 && !uploadID.isEmpty, "\(created)")
        func send(_ sha256: String) async throws -> ProcessResult {
            try await aws.run(["s3api", "upload-part", "--bucket", "syncr-test", "--key", key, "--upload-id", uploadID,
                               "--part-number", "1", "--body", file.path, "--checksum-sha256", sha256],
                              environment: ["AWS_MAX_ATTEMPTS": "1"])
        }
        // The SHA-256 of no bytes, not of the part's.
        let wrong = try await send("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        #expect(wrong.exitCode != 0)
        #expect(wrong.stderr.contains("BadDigest") || wrong.stderr.contains("XAmzContentChecksumMismatch"), "\(wrong.stderr)")
        let right = try await send(Uploader.base64(hex: try await sha256(file: file)))
        #expect(right.exitCode == 0, "\(right.stderr)")
        _ = try await aws.run(["s3api", "abort-multipart-upload", "--bucket", "syncr-test", "--key", key, "--upload-id", uploadID])
    }
}
