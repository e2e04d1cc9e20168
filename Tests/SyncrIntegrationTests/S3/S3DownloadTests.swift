#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `s3://` downloads against SeaweedFS: signed HEAD and ranged GETs through the one request
/// builder, so skip, segmented pieces, checksums and unzip behave as for HTTP.
@Suite(.timeLimit(.minutes(10))) struct S3DownloadTests {
    /// What `aws s3 cp` uploaded, syncr downloads byte-identical: a key with spaces and
    /// non-ASCII characters, in parallel Range pieces, checked against its SHA-256; the second
    /// run finds it up to date.
    @Test func downloadsWhatTheAWSCLIUploaded() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let source = project.file("upload/src.bin")
        try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        try makeFile(path: source, size: 5_000_123, seed: 11)
        let key = SeaweedFS.uniquePrefix("download") + "my file ü 日本.bin"
        try await AWSCLI(server: server).copy(source.path, "s3://syncr-test/\(key)")
        let digest = try await sha256(file: source)
        try project.writeManifest(defaults: "{ retries: 2, timeout: 10s, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(key)\", to: out/copy.bin, sha256: \(digest), min_split: 1MiB, connections: 4 }"])
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first)")
        #expect(try await sha256(file: project.file("out/copy.bin")) == digest)
        let second = try await project.run(["apply"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second)")
        #expect(second.stderr.contains("0 transferred, 1 up to date"), "\(second.stderr)")
        #expect(!first.stderr.contains(SeaweedFS.secretKey) && !first.stdout.contains(SeaweedFS.secretKey))
    }

    /// A download killed half-way resumes from what the cache holds: the next run asks for
    /// the rest only (a ranged GET, signed like the first), and the file is byte-identical.
    /// The store is reached through the tests' throttling proxy, so that the kill lands mid-file.
    @Test func aKilledDownloadResumesFromTheCache() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let source = project.file("upload/src.bin")
        try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        let size = 6_000_011
        try makeFile(path: source, size: size, seed: 12)
        let key = SeaweedFS.uniquePrefix("resume") + "big.bin"
        try await AWSCLI(server: server).copy(source.path, "s3://syncr-test/\(key)")
        let proxy = try await ThrottleProxy.start(targetPort: server.s3Port, rate: 1_000_000)
        defer { proxy.stop() }
        func manifest(endpoint: String) throws {
            try project.writeManifest(defaults: "{ retries: 2, timeout: 10s, s3: { endpoint: \"\(endpoint)\" } }",
                                      downloads: ["{ url: \"s3://syncr-test/\(key)\", to: out/big.bin, connections: 1 }"])
        }
        try manifest(endpoint: proxy.url(server.endpoint))
        let child = try project.start(["apply"], environment: server.environment)
        let kept = LockedBox(0)
        let killed = await pollOnItsOwnThread(timeout: .seconds(60)) {
            guard let good = project.recordedGoodBytes(), good >= 1_000_000 else { return false }
            kill(child.pid, SIGKILL)
            kept.withLock { $0 = good }
            return true
        }
        kill(child.pid, SIGKILL)
        _ = child.wait(timeout: .seconds(30))
        try #require(killed, "the cache should record bytes before the download ends")
        try #require(!project.exists("out/big.bin"))

        try manifest(endpoint: server.endpoint)
        let second = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second)")
        let item = try #require(items(try jsonObject(second.stdout)).first)
        let transferred = try #require(item["transferred"] as? Int)
        #expect(transferred <= size - kept.withLock { $0 }, "only what the cache did not hold: \(transferred)")
        #expect(try await sha256(file: project.file("out/big.bin")) == (try await sha256(file: source)))
    }

    /// An `s3://` entry can be locked like an https one: `lock --hash` pins the object's
    /// SHA-256 (no secret in the lock), `apply --locked` then skips it without asking the store,
    /// and an object replaced since fails its entry under `--locked`, keeping the destination.
    @Test func aLockedObjectIsSkippedUntilItChanges() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let source = project.file("upload/v1.bin")
        try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        try makeFile(path: source, size: 70_001, seed: 21)
        let key = SeaweedFS.uniquePrefix("locked") + "model.bin"
        let aws = AWSCLI(server: server)
        try await aws.copy(source.path, "s3://syncr-test/\(key)")
        try project.writeManifest(defaults: "{ retries: 0, timeout: 10s, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(key)\", to: out/model.bin }"])
        let lock = try await project.run(["lock", "--hash"], environment: server.environment)
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        let text = try String(contentsOf: project.file("syncr.lock"), encoding: .utf8)
        let digest = try await sha256(file: source)
        #expect(text.contains("sha256: \"\(digest)\""), "\(text)")
        #expect(text.contains("s3://syncr-test/\(key)"), "\(text)")
        #expect(!text.contains(SeaweedFS.secretKey) && !text.contains(SeaweedFS.accessKey), "\(text)")

        let plan = try await project.run(["plan", "--locked", "--detailed-exitcode"], environment: server.environment)
        #expect(plan.exitCode == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("the server was not asked"), "\(plan.stdout)")

        let changed = project.file("upload/v2.bin")
        try makeFile(path: changed, size: 70_002, seed: 22)
        try await aws.copy(changed.path, "s3://syncr-test/\(key)")
        // The destination was changed locally too, so the record no longer vouches for it and
        // the store must be asked: it answers with the other object.
        try makeFile(path: project.file("out/model.bin"), size: 10, seed: 23)
        let locked = try await project.run(["apply", "--locked", "--progress", "none"], environment: server.environment)
        #expect(locked.exitCode == 1, "\(locked.stderr)")
        #expect(locked.stderr.contains("changed since syncr.lock was written"), "\(locked.stderr)")
        #expect(try Data(contentsOf: project.file("out/model.bin")).count == 10, "the destination is left as it is")
    }

    /// A missing key, a missing bucket and a wrong secret each fail their entry with S3's code,
    /// the bucket and key, and where the credentials came from; never the secret. Exit 1.
    /// An empty object has no range to give: the store answers the first request (a range from
    /// byte 0) with 416 InvalidRange, and a plain GET then fetches the empty file.
    @Test func anEmptyObjectDownloads() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let source = project.file("upload/empty")
        try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: source)
        let key = SeaweedFS.uniquePrefix("empty") + "empty"
        try await AWSCLI(server: server).copy(source.path, "s3://syncr-test/\(key)")
        try project.writeManifest(defaults: "{ retries: 0, timeout: 10s, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(key)\", to: out/empty }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result)")
        #expect(try Data(contentsOf: project.file("out/empty")).isEmpty)
        let again = try await project.run(["apply"], environment: server.environment)
        #expect(again.stderr.contains("0 transferred, 1 up to date"), "\(again.stderr)")
    }

    @Test func missingKeyMissingBucketAndBadCredentialsAreExplained() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let prefix = SeaweedFS.uniquePrefix("errors")
        try project.writeManifest(defaults: "{ retries: 0, timeout: 10s, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)missing.bin\", to: out/a.bin }",
                                              "{ url: \"s3://no-such-bucket-syncr/k.bin\", to: out/b.bin }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("NoSuchKey"), "\(result.stderr)")
        #expect(result.stderr.contains("key \(prefix)missing.bin"), "\(result.stderr)")
        #expect(result.stderr.contains("NoSuchBucket"), "\(result.stderr)")
        #expect(result.stderr.contains("bucket no-such-bucket-syncr"), "\(result.stderr)")

        let wrong = "wrong+secret/0123456789abcdefghijklmnopq"
        let refused = try await project.run(["apply"], environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": wrong]) { $1 })
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("SignatureDoesNotMatch"), "\(refused.stderr)")
        #expect(refused.stderr.contains("access key \(SeaweedFS.accessKey) from the environment (AWS_ACCESS_KEY_ID)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains(wrong) && !refused.stdout.contains(wrong))
        let plan = try await project.run(["plan", "--json"], environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": wrong]) { $1 })
        #expect(!plan.stdout.contains(wrong) && !plan.stderr.contains(wrong))
    }

    /// No credentials anywhere: the entry fails before any request, saying where they were
    /// looked for and what to set.
    @Test func noCredentialsSaysWhatToSet() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/x.bin\", to: out/x.bin }"])
        let result = try await project.run(["apply"], environment: server.environment.merging(["AWS_ACCESS_KEY_ID": ""]) { $1 })
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(result.stderr)")
    }

    /// `unzip: true` works on an object as on an http(s) file.
    @Test func unzipsAnArchiveObject() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let archive = project.file("a.zip")
        let zipped = try await runProcess(executable: "python3", arguments: ["-c", """
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr("docs/readme.txt", "hello from s3\\n")
                z.writestr("bin/tool", "#!/bin/sh\\n")
            """, archive.path])
        try #require(zipped.exitCode == 0, "\(zipped)")
        let key = SeaweedFS.uniquePrefix("unzip") + "a.zip"
        try await AWSCLI(server: server).copy(archive.path, "s3://syncr-test/\(key)")
        try project.writeManifest(defaults: "{ retries: 2, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(key)\", to: tree/, unzip: true }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result)")
        #expect(try String(contentsOf: project.file("tree/docs/readme.txt"), encoding: .utf8) == "hello from s3\n")
    }
}
