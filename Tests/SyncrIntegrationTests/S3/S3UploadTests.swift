import Foundation
import Testing

/// Uploads to `s3://` against SeaweedFS: PutObject with Content-MD5 and a signed SHA-256, the
/// SHA-256 kept as object metadata, skip-if-unchanged decided from HEAD.
@Suite(.timeLimit(.minutes(10))) struct S3UploadTests {
    func writeManifest(_ project: Project, server: SeaweedFS.Server, uploads: [String]) throws {
        var text = "version: 1\ndefaults: { retries: 2, timeout: 10s, s3: { endpoint: \"\(server.endpoint)\" } }\nuploads:\n"
        for u in uploads { text += "  - \(u)\n" }
        try text.write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)
    }

    /// What syncr uploads, `aws s3 cp` downloads byte-identical; the object carries its SHA-256;
    /// the next plan skips it, and plans it again once another tool replaced the object.
    @Test func awsCLIDownloadsWhatSyncrUploaded() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("dist"), withIntermediateDirectories: true)
        try makeFile(path: project.file("dist/app.bin"), size: 3_000_017, seed: 21)
        let key = SeaweedFS.uniquePrefix("upload") + "builds/app ü.bin"
        try writeManifest(project, server: server, uploads: ["{ from: dist/app.bin, to: \"s3://syncr-test/\(key)\" }"])
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first)")
        let aws = AWSCLI(server: server)
        try await aws.copy("s3://syncr-test/\(key)", project.file("back.bin").path)
        let digest = try await sha256(file: project.file("dist/app.bin"))
        #expect(try await sha256(file: project.file("back.bin")) == digest)
        let head = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", key])
        #expect(head.stdout.contains("\"syncr-sha256\": \"\(digest)\""), "\(head.stdout)")

        let again = try await project.run(["plan"], environment: server.environment)
        #expect(again.stdout.contains("unchanged: the object has the same size and SHA-256"), "\(again.stdout)")
        try makeFile(path: project.file("other.bin"), size: 3_000_017, seed: 22)
        try await aws.copy(project.file("other.bin").path, "s3://syncr-test/\(key)")
        let stale = try await project.run(["plan"], environment: server.environment)
        #expect(stale.stdout.contains("another SHA-256, or none recorded by syncr"), "\(stale.stdout)")
    }

    /// A folder goes up under the prefix, one object per file; `aws s3 sync` brings the same
    /// tree back.
    @Test func folderUploadsUnderThePrefix() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let names = ["index.html", "css/site.css", "img/a b.png"]
        for (i, name) in names.enumerated() {
            try FileManager.default.createDirectory(at: project.file("site/" + name).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try makeFile(path: project.file("site/" + name), size: 5_000 + i * 777, seed: UInt64(30 + i))
        }
        let prefix = SeaweedFS.uniquePrefix("site")
        try writeManifest(project, server: server, uploads: ["{ from: site/, to: \"s3://syncr-test/\(prefix)\" }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result)")
        let back = project.file("back")
        let sync = try await AWSCLI(server: server).run(["s3", "sync", "--only-show-errors", "s3://syncr-test/\(prefix)", back.path])
        try #require(sync.exitCode == 0, "\(sync.stderr)")
        for name in names {
            #expect(try await sha256(file: back.appendingPathComponent(name)) == (try await sha256(file: project.file("site/" + name))), "\(name)")
        }
        let again = try await project.run(["apply"], environment: server.environment)
        #expect(again.stderr.contains("0 transferred, 1 up to date"), "\(again.stderr)")
        // --force sends every file again, up to date or not.
        let forced = try await project.run(["apply", "--force", "--json"], environment: server.environment)
        #expect(forced.exitCode == 0, "\(forced)")
        let item = try #require(items(try jsonObject(forced.stdout)).first)
        #expect(item["transferred"] as? Int == (0..<names.count).reduce(0) { $0 + 5_000 + $1 * 777 }, "\(item)")
        // One file changed (and none recorded: as after a killed run): only its object goes,
        // and the plan says how much that is.
        try makeFile(path: project.file("site/css/site.css"), size: 4_321, seed: 99)
        try FileManager.default.removeItem(at: project.file(".syncr/cache"))
        let plan = try await project.run(["plan", "--json"], environment: server.environment)
        #expect(items(try jsonObject(plan.stdout)).first?["bytes"] as? Int == 4_321, "\(plan.stdout)")
        let one = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(one.exitCode == 0, "\(one)")
        #expect(items(try jsonObject(one.stdout)).first?["transferred"] as? Int == 4_321, "\(one.stdout)")
        let after = try await project.run(["apply"], environment: server.environment)
        #expect(after.stderr.contains("0 transferred, 1 up to date"), "\(after.stderr)")
    }

    /// Uploads the store refuses (a wrong secret: SignatureDoesNotMatch): each entry fails with
    /// S3's code and the bucket and key of the object it sent (a folder's file, a multipart
    /// upload's object), says where the credentials came from, and the run exits 1; the secret
    /// is never shown. (SeaweedFS makes a missing bucket on the first PUT into it, so a missing
    /// bucket cannot be played here for uploads.)
    @Test func refusedUploadsNameTheObject() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("site"), withIntermediateDirectories: true)
        try makeFile(path: project.file("site/only.txt"), size: 1_000, seed: 50)
        try makeFile(path: project.file("big.bin"), size: 6 << 20, seed: 51)
        let prefix = SeaweedFS.uniquePrefix("refused")
        try writeManifest(project, server: server, uploads: [
            "{ from: site/, to: \"s3://syncr-test/\(prefix)\", retries: 0 }",
            "{ from: big.bin, to: \"s3://syncr-test/\(prefix)big.bin\", multipart_threshold: 5MiB, part_size: 5MiB, retries: 0 }",
            "{ from: site/, to: \"s3://syncr-test/\(prefix)zipped/\", zip: true, retries: 0 }"])
        let wrong = "wrong+secret/0123456789abcdefghijklmnopq"
        let refused = try await project.run(["apply"], environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": wrong]) { $1 })
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("SignatureDoesNotMatch"), "\(refused.stderr)")
        #expect(refused.stderr.contains("key \(prefix)only.txt"), "\(refused.stderr)")
        #expect(refused.stderr.contains("key \(prefix)big.bin"), "\(refused.stderr)")
        #expect(refused.stderr.contains("key \(prefix)zipped/site.zip"), "\(refused.stderr)")
        #expect(refused.stderr.contains("from the environment (AWS_ACCESS_KEY_ID)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains(wrong) && !refused.stdout.contains(wrong))
        // plan says so too, and fails: it said "upload" and exited 0, so a CI gate on plan
        // passed with broken credentials.
        let plan = try await project.run(["plan", "--json"], environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": wrong]) { $1 })
        #expect(plan.exitCode == 1, "\(plan)")
        let planned = items(try jsonObject(plan.stdout))
        #expect(planned.allSatisfy { $0["action"] as? String == "error" }, "\(plan.stdout)")
        #expect(plan.stdout.contains("SignatureDoesNotMatch") && plan.stdout.contains("from the environment (AWS_ACCESS_KEY_ID)"),
                "\(plan.stdout)")
        #expect(!plan.stdout.contains(wrong))
    }

    /// Credentials that may write but not read (a least-privilege publishing role): the HEAD
    /// is refused with AccessDenied, which says nothing about the object, so the file is sent.
    /// Taking that refusal for the plan's failure stopped such uploads before their PUT.
    @Test func writeOnlyCredentialsStillUpload() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try makeFile(path: project.file("out.bin"), size: 2_345, seed: 53)
        let key = SeaweedFS.uniquePrefix("write-only") + "out.bin"
        try writeManifest(project, server: server, uploads: ["{ from: out.bin, to: \"s3://syncr-test/\(key)\" }"])
        let writer = server.environment.merging(["AWS_ACCESS_KEY_ID": SeaweedFS.writerKey]) { $1 }
        let plan = try await project.run(["plan", "--json"], environment: writer)
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "upload", "\(plan.stdout)")
        #expect(plan.stdout.contains("the store answered HTTP 403 to HEAD, so syncr cannot tell whether it holds this file"),
                "\(plan.stdout)")
        let applied = try await project.run(["apply"], environment: writer)
        #expect(applied.exitCode == 0, "\(applied)")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", project.file("back.bin").path)
        #expect(try await sha256(file: project.file("back.bin")) == (try await sha256(file: project.file("out.bin"))))
    }

    /// A file sent to a prefix (`s3://b/reports/`) or to the bucket goes under its own name, as
    /// `aws s3 cp` puts it: the prefix itself as the key was a folder marker (0 bytes on
    /// SeaweedFS, the run said "uploaded" every time), the bucket's a CreateBucket request.
    @Test func aFileSentToAPrefixGoesUnderItsName() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try makeFile(path: project.file("report.txt"), size: 1_234, seed: 52)
        let prefix = SeaweedFS.uniquePrefix("to-prefix")
        try writeManifest(project, server: server, uploads: ["{ from: report.txt, to: \"s3://syncr-test/\(prefix)\" }"])
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first)")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(prefix)report.txt", project.file("back.txt").path)
        #expect(try await sha256(file: project.file("back.txt")) == (try await sha256(file: project.file("report.txt"))))
        let again = try await project.run(["plan"], environment: server.environment)
        #expect(again.stdout.contains("unchanged: the object has the same size and SHA-256"), "\(again.stdout)")
    }

    /// `zip: true` to an object: the folder goes up as one archive, which `aws s3 cp` brings
    /// back and `unzip` reads; the object carries the archive's SHA-256. The next plan decides
    /// from the folder and a HEAD of the object: a skip; a changed file, or an object another
    /// tool replaced or removed, is sent again.
    @Test func aZippedFolderGoesUpAsOneObject() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let names = ["index.html", "css/site.css"]
        for (i, name) in names.enumerated() {
            try FileManager.default.createDirectory(at: project.file("site/" + name).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try makeFile(path: project.file("site/" + name), size: 7_000 + i * 999, seed: UInt64(60 + i))
        }
        let key = SeaweedFS.uniquePrefix("zip") + "site.zip"
        try writeManifest(project, server: server, uploads: ["{ from: site/, to: \"s3://syncr-test/\(key)\", zip: true }"])
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first)")
        let aws = AWSCLI(server: server)
        let back = project.file("back.zip")
        try await aws.copy("s3://syncr-test/\(key)", back.path)
        let unzipped = try await runProcess(executable: "unzip", arguments: ["-q", back.path, "-d", project.file("back").path])
        try #require(unzipped.exitCode == 0, "\(unzipped.stderr)")
        for name in names {
            #expect(try await sha256(file: project.file("back/" + name)) == (try await sha256(file: project.file("site/" + name))), "\(name)")
        }
        let head = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", key])
        #expect(head.stdout.contains("\"syncr-sha256\": \"\(try await sha256(file: back))\""), "\(head.stdout)")
        #expect(head.stdout.contains("application/zip"), "\(head.stdout)")

        let again = try await project.run(["plan", "--json"], environment: server.environment)
        #expect(items(try jsonObject(again.stdout)).first?["action"] as? String == "skip", "\(again.stdout)")
        // Another tool's object under the key, of another size or of the same: the plan sends
        // the archive again.
        try await aws.copy(project.file("site/index.html").path, "s3://syncr-test/\(key)")
        let replaced = try await project.run(["plan"], environment: server.environment)
        #expect(replaced.stdout.contains("bytes in the store"), "\(replaced.stdout)")
        let archiveSize = try #require(try FileManager.default.attributesOfItem(atPath: back.path)[.size] as? Int)
        try makeFile(path: project.file("same-size.bin"), size: archiveSize, seed: 98)
        try await aws.copy(project.file("same-size.bin").path, "s3://syncr-test/\(key)")
        let sameSize = try await project.run(["plan"], environment: server.environment)
        #expect(sameSize.stdout.contains("another SHA-256, or none recorded by syncr"), "\(sameSize.stdout)")
        _ = try await aws.run(["s3", "rm", "s3://syncr-test/\(key)"])
        let removed = try await project.run(["plan"], environment: server.environment)
        #expect(removed.stdout.contains("is not in the store"), "\(removed.stdout)")
        let restored = try await project.run(["apply"], environment: server.environment)
        #expect(restored.exitCode == 0 && restored.stderr.contains("1 uploaded"), "\(restored)")
        // A changed file changes the archive; credentials the store refuses fail that plan too
        // (it asks the store first, whatever the folder says).
        try makeFile(path: project.file("site/css/site.css"), size: 4_321, seed: 99)
        let changed = try await project.run(["plan", "--json"], environment: server.environment)
        #expect(items(try jsonObject(changed.stdout)).first?["reason"] as? String == "1 file changed since the last upload",
                "\(changed.stdout)")
        let wrong = server.environment.merging(["AWS_SECRET_ACCESS_KEY": "wrong+secret/0123456789abcdefghijklmnopq"]) { $1 }
        let refused = try await project.run(["plan"], environment: wrong)
        #expect(refused.exitCode == 1 && refused.stdout.contains("SignatureDoesNotMatch"), "\(refused)")
        let applied = try await project.run(["apply"], environment: server.environment)
        #expect(applied.exitCode == 0, "\(applied)")
        try await aws.copy("s3://syncr-test/\(key)", back.path)
        let unzippedAgain = try await runProcess(executable: "unzip", arguments: ["-q", "-o", back.path, "-d", project.file("back").path])
        try #require(unzippedAgain.exitCode == 0, "\(unzippedAgain.stderr)")
        #expect(try await sha256(file: project.file("back/css/site.css")) == (try await sha256(file: project.file("site/css/site.css"))))
        let settled = try await project.run(["apply"], environment: server.environment)
        #expect(settled.stderr.contains("0 transferred, 1 up to date"), "\(settled.stderr)")
    }

    /// `zip: true` to a prefix: the archive goes under the folder's name, as a file does. An
    /// archive above `multipart_threshold` goes up in parts and carries its SHA-256 all the same.
    @Test func aLargeZippedFolderGoesUpInPartsUnderThePrefix() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("data"), withIntermediateDirectories: true)
        // Random bytes: the archive is as large as the files, 3 parts.
        try makeFile(path: project.file("data/a.bin"), size: 7 << 20, seed: 70)
        try makeFile(path: project.file("data/b.bin"), size: 4 << 20, seed: 71)
        let prefix = SeaweedFS.uniquePrefix("zip-parts")
        try writeManifest(project, server: server, uploads: [
            "{ from: data/, to: \"s3://syncr-test/\(prefix)\", zip: true, multipart_threshold: 5MiB, part_size: 5MiB }"])
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first)")
        let aws = AWSCLI(server: server)
        let back = project.file("back.zip")
        try await aws.copy("s3://syncr-test/\(prefix)data.zip", back.path)
        let head = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", prefix + "data.zip"])
        #expect(head.stdout.contains("-3\\\""), "the ETag of a 3-part upload ends in -3: \(head.stdout)")
        #expect(head.stdout.contains("\"syncr-sha256\": \"\(try await sha256(file: back))\""), "\(head.stdout)")
        let unzipped = try await runProcess(executable: "unzip", arguments: ["-q", back.path, "-d", project.file("back").path])
        try #require(unzipped.exitCode == 0, "\(unzipped.stderr)")
        for name in ["a.bin", "b.bin"] {
            #expect(try await sha256(file: project.file("back/" + name)) == (try await sha256(file: project.file("data/" + name))), "\(name)")
        }
        let cache = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(!cache.contains { $0.hasSuffix(".multipart") }, "the record goes once the upload is complete: \(cache)")
        let again = try await project.run(["plan"], environment: server.environment)
        #expect(again.stdout.contains("unchanged since the last upload (2 files zipped to"), "\(again.stdout)")
    }

    /// `zip: true` with credentials that may write but not read: the HEAD's AccessDenied says
    /// nothing about the object, so the plan does not fail, and apply sends the archive.
    @Test func writeOnlyCredentialsStillUploadAnArchive() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("logs"), withIntermediateDirectories: true)
        try makeFile(path: project.file("logs/run.log"), size: 3_456, seed: 54)
        let prefix = SeaweedFS.uniquePrefix("write-only-zip")
        try writeManifest(project, server: server, uploads: ["{ from: logs/, to: \"s3://syncr-test/\(prefix)\", zip: true }"])
        let writer = server.environment.merging(["AWS_ACCESS_KEY_ID": SeaweedFS.writerKey]) { $1 }
        let plan = try await project.run(["plan", "--json"], environment: writer)
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "upload", "\(plan.stdout)")
        let applied = try await project.run(["apply"], environment: writer)
        #expect(applied.exitCode == 0, "\(applied)")
        let back = project.file("back.zip")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(prefix)logs.zip", back.path)
        let unzipped = try await runProcess(executable: "unzip", arguments: ["-q", back.path, "-d", project.file("back").path])
        try #require(unzipped.exitCode == 0, "\(unzipped.stderr)")
        #expect(try await sha256(file: project.file("back/run.log")) == (try await sha256(file: project.file("logs/run.log"))))
    }
}
