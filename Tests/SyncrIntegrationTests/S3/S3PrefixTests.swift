import Foundation
import Testing

/// `s3://bucket/prefix/` downloads: every object under the prefix, listed with ListObjectsV2
/// over every page, each downloaded into the folder under the rest of its key.
@Suite(.timeLimit(.minutes(10))) struct S3PrefixTests {
    /// A tree synced up with `aws s3 sync` comes down identical, nested keys and all; a second
    /// run finds every object up to date.
    @Test func mirrorsEveryObjectUnderThePrefix() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let tree = project.file("src")
        let files = ["a.txt", "sub/b c.txt", "sub/deeper/ü.bin"]
        for (i, name) in files.enumerated() {
            try FileManager.default.createDirectory(at: tree.appendingPathComponent(name).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try makeFile(path: tree.appendingPathComponent(name), size: 10_000 * (i + 1), seed: UInt64(i + 3))
        }
        let prefix = SeaweedFS.uniquePrefix("prefix")
        let sync = try await AWSCLI(server: server).run(["s3", "sync", "--only-show-errors", tree.path, "s3://syncr-test/\(prefix)"])
        try #require(sync.exitCode == 0, "\(sync.stderr)")
        try project.writeManifest(defaults: "{ retries: 2, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: data/ }"])
        let plan = try await project.run(["plan"], environment: server.environment)
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(plan.stdout.contains("3 to download"), "\(plan.stdout)")
        let first = try await project.run(["apply"], environment: server.environment)
        #expect(first.exitCode == 0, "\(first.stderr)")
        // Each object is an item of its own, counted against the objects, not the one entry.
        for (n, name) in files.enumerated() {
            #expect(first.stderr.contains("[\(n + 1)/3] download data/"), "\(first.stderr)")
            #expect(first.stderr.contains("done download data/\(name)"), "\(first.stderr)")
        }
        #expect(!first.stderr.contains("/1] "), "\(first.stderr)")
        for name in files {
            #expect(try await sha256(file: project.file("data/" + name)) == (try await sha256(file: tree.appendingPathComponent(name))), "\(name)")
        }
        let second = try await project.run(["apply"], environment: server.environment)
        #expect(second.stderr.contains("0 transferred, 3 up to date"), "\(second.stderr)")
    }

    /// Keys with characters that a listing must carry exactly: `+` (a space in a form), `%`,
    /// a space and a control character (which XML 1.0 cannot hold, so the listing is asked
    /// for URL-encoded).
    @Test func keysWithPlusPercentAndControlCharactersComeDownAsNamed() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let tree = project.file("src")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        let names = ["a+b.txt", "100% c.txt", "ctl\u{01}x.txt"]
        for (i, name) in names.enumerated() { try Data("object \(i)\n".utf8).write(to: tree.appendingPathComponent(name)) }
        let prefix = SeaweedFS.uniquePrefix("keys")
        let sync = try await AWSCLI(server: server).run(["s3", "sync", "--only-show-errors", tree.path, "s3://syncr-test/\(prefix)"])
        try #require(sync.exitCode == 0, "\(sync.stderr)")
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: data/ }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let got = try FileManager.default.contentsOfDirectory(atPath: project.file("data").path).filter { !$0.hasPrefix(".") }
        #expect(Set(got) == Set(names), "\(got.map { $0.unicodeScalars.map(\.value) })")
        for (i, name) in names.enumerated() {
            #expect(FileManager.default.contents(atPath: project.file("data/" + name).path) == Data("object \(i)\n".utf8), "\(name)")
        }
    }

    /// More objects than one ListObjectsV2 page holds (1,000): the next pages are asked for
    /// with the continuation token, and every object arrives.
    @Test func followsEveryPage() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let tree = project.file("many")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        for i in 0..<1_005 { try Data("object \(i)\n".utf8).write(to: tree.appendingPathComponent(String(format: "f%04d.txt", i))) }
        let prefix = SeaweedFS.uniquePrefix("paging")
        let sync = try await AWSCLI(server: server).run(["s3", "sync", "--only-show-errors", tree.path, "s3://syncr-test/\(prefix)"])
        try #require(sync.exitCode == 0, "\(sync.stderr)")
        try project.writeManifest(defaults: "{ retries: 2, jobs: 16, fsync: false, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: out/ }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result.stderr.suffix(2000))")
        let names = try FileManager.default.contentsOfDirectory(atPath: project.file("out").path).filter { !$0.hasPrefix(".") }
        #expect(names.count == 1_005)
        #expect(try String(contentsOf: project.file("out/f1004.txt"), encoding: .utf8) == "object 1004\n")
    }

    /// The plan's free-space check counts each listed object at its own destination: one
    /// whose folder is on a small file system (here `data/sub`, linked to a 4 MiB tmpfs) is
    /// warned about there. The prefix's folder, which the check used for every object, is on
    /// the cache's file system and has room.
    @Test(.enabled(if: Tmpfs.canRun, "mounting a tmpfs needs root (CI runs the tests as root)"))
    func freeSpaceIsCheckedWhereEachObjectGoes() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let disk = try Tmpfs(megabytes: 4)
        let source = project.file("big.bin")
        try makeFile(path: source, size: 6 << 20, seed: 41)
        let prefix = SeaweedFS.uniquePrefix("space")
        let copy = try await AWSCLI(server: server).run(["s3", "cp", "--only-show-errors", source.path,
                                                         "s3://syncr-test/\(prefix)sub/big.bin"])
        try #require(copy.exitCode == 0, "\(copy.stderr)")
        try FileManager.default.createDirectory(at: project.file("data"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: project.file("data/sub").path, withDestinationPath: disk.path)
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: data/ }"])
        let plan = try await project.run(["plan"], environment: server.environment)
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(plan.stdout.contains("warning: downloads need 6.0 MiB in \(project.file("data/sub").path) but 4.0 MiB is free"),
                "\(plan.stdout)")
    }

    /// A prefix's objects are listed when it runs: `syncr lock` refuses to pin it, and a lock
    /// that names it anyway (a store answering for a folder marker) stops a locked run before
    /// any request, naming the entry.
    @Test func aPrefixCannotBeLocked() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let prefix = SeaweedFS.uniquePrefix("locked")
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: data/ }"])
        let lock = try await project.run(["lock"], environment: server.environment)
        #expect(lock.exitCode != 0, "\(lock.stderr)")
        #expect(lock.stderr.contains("an s3:// prefix is listed when it runs, so a lock cannot pin its objects"), "\(lock.stderr)")
        #expect(!project.exists("syncr.lock"))
        try """
            version: 1
            manifest: "syncr.yml"
            downloads:
              - to: "data/"
                url: "s3://syncr-test/\(prefix)"
                size: 0

            """.write(to: project.file("syncr.lock"), atomically: true, encoding: .utf8)
        let plan = try await project.run(["plan", "--locked"], environment: server.environment)
        #expect(plan.exitCode == 65, "\(plan.stderr)")
        #expect(plan.stderr.contains("downloads[0] (to: data/): an s3:// prefix is listed when it runs"), "\(plan.stderr)")
    }

    /// A prefix that lists nothing (here a typo in its case) fails its entry, naming it: it
    /// did nothing and exited 0, and the entry was missing from --json.
    @Test func aPrefixWithNoObjectFailsItsEntry() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let prefix = SeaweedFS.uniquePrefix("empty")
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)Data/\", to: out/ }"])
        let result = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(result.exitCode == 1, "\(result)")
        let item = try #require(items(try jsonObject(result.stdout)).first)
        #expect(item["index"] as? Int == 0 && item["status"] as? String == "failed", "\(item)")
        #expect((item["error"] as? String)?.contains("no object under this prefix; check the bucket and the prefix") == true, "\(item)")
    }

    /// A prefix that holds only folder markers (keys ending in `/`, as consoles make) exists:
    /// its failure says so, not that the prefix may be a typo.
    @Test func aPrefixOfFolderMarkersOnlySaysSo() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let prefix = SeaweedFS.uniquePrefix("markers")
        for key in ["\(prefix)", "\(prefix)sub/"] {
            let put = try await AWSCLI(server: server).run(["s3api", "put-object", "--bucket", "syncr-test", "--key", key])
            try #require(put.exitCode == 0, "\(put.stderr)")
        }
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: out/ }"])
        let result = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(result.exitCode == 1, "\(result)")
        let item = try #require(items(try jsonObject(result.stdout)).first)
        let error = try #require(item["error"] as? String)
        #expect(error.contains("only folder markers under this prefix (") && error.contains("no object to download"), "\(error)")
    }

    /// A store holds the keys `a` and `a/b` (SeaweedFS too); a file system cannot hold both. The
    /// file fails at the listing, naming both keys, and the other objects come down: it failed
    /// only once it had been fetched.
    @Test func aKeyThatIsAlsoTheFolderOfOthersFailsBeforeItIsFetched() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        let prefix = SeaweedFS.uniquePrefix("clash")
        let body = project.file("body")
        try Data("x".utf8).write(to: body)
        for key in ["a", "a/b", "z"] {
            let put = try await AWSCLI(server: server).run(["s3api", "put-object", "--bucket", "syncr-test", "--key", prefix + key,
                                                            "--body", body.path])
            try #require(put.exitCode == 0, "\(put.stderr)")
        }
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://syncr-test/\(prefix)\", to: out/ }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("the object \"\(prefix)a\" is also the folder of the object \"\(prefix)a/b\", so out/a cannot be both"),
                "\(result.stderr)")
        #expect(result.stderr.contains("2 downloaded, 0 up to date, 1 failed"), "\(result.stderr)")
        for name in ["out/a/b", "out/z"] {
            #expect(try String(contentsOf: project.file(name), encoding: .utf8) == "x", "\(name)")
        }
    }

    /// A prefix in a bucket that does not exist fails its entry with S3's code, before any
    /// object is asked about.
    @Test func missingBucketFailsTheListing() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 0, s3: { endpoint: \"\(server.endpoint)\" } }",
                                  downloads: ["{ url: \"s3://no-such-bucket-syncr/p/\", to: out/ }"])
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("NoSuchBucket"), "\(result.stderr)")
    }
}
