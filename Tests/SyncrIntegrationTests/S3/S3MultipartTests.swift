#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing

/// Multipart uploads to SeaweedFS: parts in parallel, each checked by the store, resumable
/// after a killed run from the parts the store holds.
@Suite(.timeLimit(.minutes(10))) struct S3MultipartTests {
    func writeManifest(_ project: Project, server: SeaweedFS.Server, defaults: String = "", upload: String) throws {
        let text = """
            version: 1
            defaults: { retries: 2, timeout: 20s, \(defaults) s3: { endpoint: "\(server.endpoint)" } }
            uploads:
              - \(upload)

            """
        try text.write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)
    }

    /// Starts `apply` (or `arguments`), and SIGKILLs it once the cache records at least two
    /// finished parts.
    /// Returns the parts recorded then, and the record's text (for messages).
    func killDuringUpload(_ project: Project, server: SeaweedFS.Server,
                          arguments: [String] = ["apply"]) async throws -> (Int, String) {
        let process = Process()
        process.executableURL = project.binary
        process.arguments = arguments
        process.currentDirectoryURL = project.folder.url
        process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        let child = ChildProcess(process)
        let cache = project.file(".syncr/cache")
        let partsAtKill = LockedBox(0)
        let killed = await pollOnItsOwnThread(timeout: .seconds(120)) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
            guard let name = names.first(where: { $0.hasSuffix(".multipart") }),
                  let data = FileManager.default.contents(atPath: cache.appendingPathComponent(name).path),
                  let record = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let parts = record["parts"] as? [String: Any], parts.count >= 2 else { return false }
            kill(child.pid, SIGKILL)
            partsAtKill.withLock { $0 = parts.count }
            return true
        }
        kill(child.pid, SIGKILL)
        _ = child.wait(timeout: .seconds(30))
        try #require(killed, "the cache should record finished parts before the upload ends")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        let recordText = names.first { $0.hasSuffix(".multipart") }
            .flatMap { try? String(contentsOf: cache.appendingPathComponent($0), encoding: .utf8) } ?? "(no record)"
        return (partsAtKill.withLock { $0 }, recordText)
    }

    /// An 80 MiB `big.bin` going up in 5 MiB parts, one at a time, to a key under a prefix of
    /// its own (`name`), killed once two or more parts (fewer than all) are recorded.
    func killedUpload(_ name: String, seed: UInt64) async throws
        -> (server: SeaweedFS.Server, project: Project, key: String, kept: Int, recordText: String) {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try makeFile(path: project.file("big.bin"), size: 80 << 20, seed: seed)
        let key = SeaweedFS.uniquePrefix(name) + "big.bin"
        try writeManifest(project, server: server, defaults: "connections: 1,",
                          upload: "{ from: big.bin, to: \"s3://syncr-test/\(key)\", multipart_threshold: 5MiB, part_size: 5MiB }")
        let (kept, recordText) = try await killDuringUpload(project, server: server)
        try #require(kept >= 2 && kept < 16)
        return (server, project, key, kept, recordText)
    }

    /// A file above multipart_threshold goes up in parts; `aws s3 cp` downloads it identical,
    /// it carries its SHA-256, and the next plan finds it unchanged.
    @Test func largeFileGoesUpInParts() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try makeFile(path: project.file("big.bin"), size: 23 << 20 | 12_345, seed: 41)
        let key = SeaweedFS.uniquePrefix("multipart") + "big.bin"
        try writeManifest(project, server: server,
                          upload: "{ from: big.bin, to: \"s3://syncr-test/\(key)\", multipart_threshold: 5MiB, part_size: 5MiB }")
        let result = try await project.run(["apply"], environment: server.environment)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let aws = AWSCLI(server: server)
        try await aws.copy("s3://syncr-test/\(key)", project.file("back.bin").path)
        let digest = try await sha256(file: project.file("big.bin"))
        #expect(try await sha256(file: project.file("back.bin")) == digest)
        let head = try await aws.run(["s3api", "head-object", "--bucket", "syncr-test", "--key", key])
        #expect(head.stdout.contains("\"syncr-sha256\": \"\(digest)\""), "\(head.stdout)")
        #expect(head.stdout.contains("-5\\\""), "the ETag of a 5-part upload ends in -5: \(head.stdout)")
        let plan = try await project.run(["plan"], environment: server.environment)
        #expect(plan.stdout.contains("unchanged"), "\(plan.stdout)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(!leftovers.contains { $0.hasSuffix(".multipart") }, "the record goes once the upload is complete")
    }

    /// Killed during a multipart upload, the next run asks the store which parts it holds
    /// (ListParts), keeps those that match the file, sends the rest and completes: the object
    /// is identical, and the parts sent before the kill are not sent again.
    @Test func killedUploadResumesFromThePartsTheStoreHolds() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try makeFile(path: project.file("big.bin"), size: 80 << 20, seed: 43)
        let key = SeaweedFS.uniquePrefix("killed") + "big.bin"
        // One part at a time, so that the kill lands between parts.
        try writeManifest(project, server: server, defaults: "connections: 1,",
                          upload: "{ from: big.bin, to: \"s3://syncr-test/\(key)\", multipart_threshold: 5MiB, part_size: 5MiB }")
        let (kept, recordText) = try await killDuringUpload(project, server: server)
        try #require(kept < 16, "killed before the last part")
        // The plan counts the parts the record has as in the store (apply asks the store).
        let plan = try await project.run(["plan", "--json"], environment: server.environment)
        let planned = try #require((try jsonObject(plan.stdout)["items"] as? [[String: Any]])?.first)
        #expect(planned["bytes"] as? Int ?? 0 <= (80 << 20) - kept * (5 << 20), "\(planned)")
        #expect((planned["reason"] as? String)?.contains("a multipart upload resumes") == true, "\(planned)")

        let rerun = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(rerun.exitCode == 0, "\(rerun.stderr)")
        let item = try #require((try jsonObject(rerun.stdout)["items"] as? [[String: Any]])?.first)
        let notes = (item["notes"] as? [String] ?? []).joined()
        let resumed = notes.firstRange(of: "resumed a multipart upload, ").map { notes[$0.upperBound...].prefix { $0.isNumber } }
        let keptNow = Int(resumed ?? "") ?? 0
        #expect(keptNow >= kept, "parts kept from the first run: \(notes)\nrecord at the kill: \(recordText)")
        // Only the other parts went up again.
        #expect(item["transferred"] as? Int == (80 << 20) - keptNow * (5 << 20), "\(item)")
        let back = project.file("back.bin")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", back.path)
        #expect(try await sha256(file: back) == (try await sha256(file: project.file("big.bin"))))
    }

    /// A run killed after CompleteMultipartUpload, before it removed its record (played by
    /// putting back the record a killed run left, once a rerun completed that upload): `plan`
    /// finds the object up to date and leaves the record (it never writes); `apply` skips the
    /// entry and forgets the record, which `syncr cache` had listed as an unfinished upload.
    @Test func aRecordThatOutlivedItsCompletedUploadIsForgotten() async throws {
        let (server, project, _, _, recordText) = try await killedUpload("outlived", seed: 47)
        let cache = project.file(".syncr/cache")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".multipart") })
        let completed = try await project.run(["apply"], environment: server.environment)
        try #require(completed.exitCode == 0, "\(completed.stderr)")
        try recordText.write(to: cache.appendingPathComponent(name), atomically: true, encoding: .utf8)
        let listed = try await project.run(["cache", "--cache", ".syncr/cache"])
        #expect(listed.stdout.contains("multipart unfinished"), "\(listed.stdout)")

        let plan = try await project.run(["plan"], environment: server.environment)
        #expect(plan.stdout.contains("unchanged"), "\(plan.stdout)")
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent(name).path), "plan writes nothing")
        let apply = try await project.run(["apply"], environment: server.environment)
        #expect(apply.exitCode == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("1 up to date"), "\(apply.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".multipart") }
        #expect(left.isEmpty, "\(left)")
        let after = try await project.run(["cache", "--cache", ".syncr/cache"])
        #expect(!after.stdout.contains("unfinished"), "\(after.stdout)")
    }

    /// `zip: true`, killed during the archive's multipart upload: the next run builds the
    /// archive again, another file with the same bytes (the folder is unchanged), so the upload
    /// goes on from the parts the store holds; the object is the folder's archive.
    @Test func aKilledZippedUploadGoesOnWithTheSameArchive() async throws {
        let (server, project, key, kept, recordText) = try await killedZippedUpload("zipped", seed: 48)
        let again = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(again.exitCode == 0, "\(again.stderr)")
        let item = try #require(items(try jsonObject(again.stdout)).first)
        let notes = (item["notes"] as? [String] ?? []).joined()
        let resumed = notes.firstRange(of: "resumed a multipart upload, ").map { notes[$0.upperBound...].prefix { $0.isNumber } }
        let keptNow = Int(resumed ?? "") ?? 0
        #expect(keptNow >= kept, "parts kept from the first run: \(notes)\nrecord at the kill: \(recordText)")
        try await expectArchive(project, server: server, key: key)
        // The archive's size as the store has it: the cache keeps no archive once it is sent.
        let archive = try #require(FileManager.default.attributesOfItem(atPath: project.file("back.zip").path)[.size] as? Int)
        #expect(item["transferred"] as? Int == archive - keptNow * (5 << 20), "only the other parts went: \(item)")
    }

    /// The same, with a file added to the folder before the next run: the archive's bytes
    /// differ, so the killed upload is aborted in the store (not left there, billed) and the
    /// new archive goes whole; no record of the killed upload stays.
    @Test func aKilledZippedUploadOfAChangedFolderIsAbortedAndSentWhole() async throws {
        let (server, project, key, _, recordText) = try await killedZippedUpload("zipped-changed", seed: 49)
        let killedUpload = try uploadID(recordText)
        try #require(try await storeLists(killedUpload, key: key, server: server))
        try makeFile(path: project.file("data/added.txt"), size: 100, seed: 50)
        let again = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(again.exitCode == 0, "\(again.stderr)")
        let item = try #require(items(try jsonObject(again.stdout)).first)
        #expect(item["transferred"] as? Int ?? 0 > 80 << 20, "the archive went whole: \(item)")
        #expect(!(try await storeLists(killedUpload, key: key, server: server)), "the killed upload is aborted")
        try await expectArchive(project, server: server, key: key)
    }

    /// `apply --force` of an unchanged folder killed while it sends the archive's parts again:
    /// the next `apply` finds the object still that archive and skips the entry, and aborts the
    /// upload the kill left (the store would keep its parts, billed, for good) and forgets its
    /// record, as for a file.
    @Test func aKilledForcedZippedUploadIsAbortedWhenTheEntryIsUpToDate() async throws {
        let (server, project, key) = try await zippedUpload("zipped-forced", seed: 51)
        let completed = try await project.run(["apply"], environment: server.environment)
        try #require(completed.exitCode == 0, "\(completed.stderr)")
        let (_, recordText) = try await killDuringUpload(project, server: server, arguments: ["apply", "--force"])
        let killedUpload = try uploadID(recordText)
        try #require(try await storeLists(killedUpload, key: key, server: server))

        let again = try await project.run(["apply"], environment: server.environment)
        #expect(again.exitCode == 0 && again.stderr.contains("1 up to date"), "\(again)")
        #expect(!(try await storeLists(killedUpload, key: key, server: server)), "the killed upload is aborted")
        try await expectArchive(project, server: server, key: key)
    }

    /// The archive's upload killed, and the folder then shrunk so that the next archive goes in
    /// one PutObject: the killed upload is aborted once the entry is up to date (its record is
    /// looked for whatever the archive's size), not left in the store for good.
    @Test func aKilledZippedUploadIsAbortedOnceASmallerArchiveIsUpToDate() async throws {
        let (server, project, key, _, recordText) = try await killedZippedUpload("zipped-shrunk", seed: 52)
        let killedUpload = try uploadID(recordText)
        try FileManager.default.removeItem(at: project.file("data/big.bin"))
        try makeFile(path: project.file("data/small.bin"), size: 1_000, seed: 53)
        let smaller = try await project.run(["apply"], environment: server.environment)
        try #require(smaller.exitCode == 0, "\(smaller.stderr)")
        let upToDate = try await project.run(["apply"], environment: server.environment)
        #expect(upToDate.exitCode == 0 && upToDate.stderr.contains("1 up to date"), "\(upToDate)")
        #expect(!(try await storeLists(killedUpload, key: key, server: server)), "the killed upload is aborted")
        try await expectArchive(project, server: server, key: key)
    }

    /// A plain file's upload killed, and the file then touched (its time changed, its bytes
    /// not): the plan counts the parts recorded, and apply goes on from them.
    @Test func aKilledUploadOfATouchedFileGoesOn() async throws {
        let (server, project, _, kept, recordText) = try await killedUpload("touched", seed: 54)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)],
                                              ofItemAtPath: project.file("big.bin").path)
        let plan = try await project.run(["plan", "--json"], environment: server.environment)
        let planned = try #require(items(try jsonObject(plan.stdout)).first)
        #expect((planned["reason"] as? String)?.contains("a multipart upload resumes") == true, "\(planned)")
        let again = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(again.exitCode == 0, "\(again.stderr)")
        let item = try #require(items(try jsonObject(again.stdout)).first)
        let notes = (item["notes"] as? [String] ?? []).joined()
        let resumed = notes.firstRange(of: "resumed a multipart upload, ").map { notes[$0.upperBound...].prefix { $0.isNumber } }
        #expect(Int(resumed ?? "") ?? 0 >= kept, "\(notes)\nrecord at the kill: \(recordText)")
    }

    /// An 80 MiB file in `data/`, to go up zipped in 5 MiB parts one at a time to a key under a
    /// prefix of its own (`name`).
    func zippedUpload(_ name: String, seed: UInt64) async throws -> (server: SeaweedFS.Server, project: Project, key: String) {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("data"), withIntermediateDirectories: true)
        // Random bytes: the archive is a little larger than the file, 17 parts.
        try makeFile(path: project.file("data/big.bin"), size: 80 << 20, seed: seed)
        let key = SeaweedFS.uniquePrefix(name) + "data.zip"
        try writeManifest(project, server: server, defaults: "connections: 1,",
                          upload: "{ from: data/, to: \"s3://syncr-test/\(key)\", zip: true, multipart_threshold: 5MiB, part_size: 5MiB }")
        return (server, project, key)
    }

    /// `zippedUpload`, killed once two or more parts (fewer than all) are recorded.
    func killedZippedUpload(_ name: String, seed: UInt64) async throws
        -> (server: SeaweedFS.Server, project: Project, key: String, kept: Int, recordText: String) {
        let (server, project, key) = try await zippedUpload(name, seed: seed)
        let (kept, recordText) = try await killDuringUpload(project, server: server)
        try #require(kept >= 2 && kept < 16)
        return (server, project, key, kept, recordText)
    }

    /// The upload a multipart record's text names.
    func uploadID(_ recordText: String) throws -> String {
        let record = try JSONSerialization.jsonObject(with: Data(recordText.utf8)) as? [String: Any]
        return try #require(record?["uploadID"] as? String, "\(recordText)")
    }

    /// Whether the store still lists the multipart upload `uploadID` under `key`.
    func storeLists(_ uploadID: String, key: String, server: SeaweedFS.Server) async throws -> Bool {
        let uploads = try await AWSCLI(server: server).run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test",
                                                            "--prefix", key])
        try #require(uploads.exitCode == 0, "\(uploads)")
        return uploads.stdout.contains(uploadID)
    }

    /// The object at `key` is the archive of `data/` as it is (each file unzipped as it is
    /// here), no multipart record is left, and the next plan is a skip.
    func expectArchive(_ project: Project, server: SeaweedFS.Server, key: String) async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(!names.contains { $0.hasSuffix(".multipart") }, "\(names)")
        let back = project.file("back.zip")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", back.path)
        let unzipped = try await runProcess(executable: "unzip", arguments: ["-q", "-o", back.path, "-d", project.file("back").path])
        try #require(unzipped.exitCode == 0, "\(unzipped.stderr)")
        for name in try FileManager.default.contentsOfDirectory(atPath: project.file("data").path) {
            #expect(try await sha256(file: project.file("back/" + name)) == (try await sha256(file: project.file("data/" + name))),
                    "\(name)")
        }
        let plan = try await project.run(["plan", "--json"], environment: server.environment)
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "skip", "\(plan.stdout)")
    }

    /// A source changed since the killed upload began: that upload is aborted and a new one
    /// sends every part of the new file.
    @Test func changedSourceStartsAgain() async throws {
        let (server, project, key, _, recordText) = try await killedUpload("changed", seed: 44)
        let record = try JSONSerialization.jsonObject(with: Data(recordText.utf8)) as? [String: Any]
        let oldUpload = try #require(record?["uploadID"] as? String)
        try makeFile(path: project.file("big.bin"), size: 81 << 20, seed: 45)
        let second = try await project.run(["apply", "--json"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("resumed a multipart upload"), "\(second.stdout)")
        // The upload of the file as it was is aborted: the store keeps none of its parts.
        let uploads = try await AWSCLI(server: server).run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test",
                                                            "--prefix", key])
        #expect(uploads.exitCode == 0, "\(uploads)")
        #expect(!uploads.stdout.contains(oldUpload), "\(uploads.stdout)")
        let item = try #require((try jsonObject(second.stdout)["items"] as? [[String: Any]])?.first)
        #expect(item["transferred"] as? Int == 81 << 20)
        let back = project.file("back.bin")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", back.path)
        #expect(try await sha256(file: back) == (try await sha256(file: project.file("big.bin"))))
    }

    /// A file whose upload was killed, then shrunk below the threshold: it goes up in one
    /// PutObject, and the killed upload is aborted in the same run (not left in the store,
    /// billed, until a later run or a prune), its record gone.
    @Test func aKilledUploadOfAFileNowBelowTheThresholdIsAbortedAfterItsPut() async throws {
        let (server, project, key, _, recordText) = try await killedUpload("shrunk-file", seed: 55)
        let killedUpload = try uploadID(recordText)
        try makeFile(path: project.file("big.bin"), size: 1_000, seed: 56)
        let second = try await project.run(["apply"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(!(try await storeLists(killedUpload, key: key, server: server)), "the killed upload is aborted")
        try expectNoMultipartRecord(project)
        let back = project.file("back.bin")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", back.path)
        #expect(try await sha256(file: back) == (try await sha256(file: project.file("big.bin"))))
    }

    /// The same for a file of a folder going up under a prefix: a folder's small files are not
    /// looked for in the cache when the entry is up to date, so only the PutObject of the file
    /// that shrank ends its killed upload.
    @Test func aKilledUploadOfAFolderFileNowBelowTheThresholdIsAbortedAfterItsPut() async throws {
        let server = try await SeaweedFS.shared.start()
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("data"), withIntermediateDirectories: true)
        try makeFile(path: project.file("data/big.bin"), size: 80 << 20, seed: 57)
        try makeFile(path: project.file("data/small.bin"), size: 1_000, seed: 58)
        let prefix = SeaweedFS.uniquePrefix("shrunk-folder")
        try writeManifest(project, server: server, defaults: "connections: 1,",
                          upload: "{ from: data/, to: \"s3://syncr-test/\(prefix)\", multipart_threshold: 5MiB, part_size: 5MiB }")
        let (kept, recordText) = try await killDuringUpload(project, server: server)
        try #require(kept >= 2 && kept < 16)
        let killedUpload = try uploadID(recordText)
        try makeFile(path: project.file("data/big.bin"), size: 2_000, seed: 59)
        let second = try await project.run(["apply"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(!(try await storeLists(killedUpload, key: prefix + "big.bin", server: server)), "the killed upload is aborted")
        try expectNoMultipartRecord(project)
        for name in ["big.bin", "small.bin"] {
            let back = project.file("back-" + name)
            try await AWSCLI(server: server).copy("s3://syncr-test/\(prefix)\(name)", back.path)
            #expect(try await sha256(file: back) == (try await sha256(file: project.file("data/" + name))), "\(name)")
        }
        let plan = try await project.run(["plan", "--json"], environment: server.environment)
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "skip", "\(plan.stdout)")
    }

    /// No multipart record is left in the project's cache.
    func expectNoMultipartRecord(_ project: Project) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(!names.contains { $0.hasSuffix(".multipart") }, "\(names)")
    }

    /// A record that cannot be read in full (a field damaged, or written by another version)
    /// still names its upload: that upload is aborted before a new one starts, not left in the
    /// store for good.
    @Test func aDamagedRecordsUploadIsAborted() async throws {
        let (server, project, key, _, _) = try await killedUpload("damaged", seed: 46)
        let cache = project.file(".syncr/cache")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".multipart") })
        let path = cache.appendingPathComponent(name)
        var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
        let oldUpload = try #require(record["uploadID"] as? String)
        record["source"] = "damaged"
        try JSONSerialization.data(withJSONObject: record).write(to: path)
        let second = try await project.run(["apply"], environment: server.environment)
        #expect(second.exitCode == 0, "\(second.stderr)")
        let uploads = try await AWSCLI(server: server).run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test",
                                                            "--prefix", key])
        #expect(uploads.exitCode == 0, "\(uploads)")
        #expect(!uploads.stdout.contains(oldUpload), "\(uploads.stdout)")
        let back = project.file("back.bin")
        try await AWSCLI(server: server).copy("s3://syncr-test/\(key)", back.path)
        #expect(try await sha256(file: back) == (try await sha256(file: project.file("big.bin"))))
    }

    /// An upload an earlier run gave up on and could not abort (the store failed the DELETE: its
    /// record was kept under another name) is aborted by the next apply of the same entry, not
    /// only by a prune once the entry is gone: its parts stayed in the store, billed.
    @Test func anUploadAnEarlierRunCouldNotAbortIsAbortedNextTime() async throws {
        let (server, project, key, _, recordText) = try await killedUpload("left", seed: 47)
        let record = try JSONSerialization.jsonObject(with: Data(recordText.utf8)) as? [String: Any]
        let uploadID = try #require(record?["uploadID"] as? String)
        let cache = project.file(".syncr/cache")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".multipart") })
        let entryKey = String(name.prefix { $0 != "." })
        try FileManager.default.moveItem(at: cache.appendingPathComponent(name),
                                         to: cache.appendingPathComponent(entryKey + ".given-up.multipart"))
        let again = try await project.run(["apply"], environment: server.environment)
        #expect(again.exitCode == 0, "\(again.stderr)")
        let uploads = try await AWSCLI(server: server).run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test", "--prefix", key])
        #expect(!uploads.stdout.contains(uploadID), "\(uploads.stdout)")
        let names = try FileManager.default.contentsOfDirectory(atPath: cache.path)
        #expect(!names.contains { $0.hasSuffix(".multipart") }, "\(names)")
    }

    /// `syncr cache prune` with a manifest that no longer has the upload removes its record and
    /// aborts the multipart upload in the store; without the store's credentials it keeps both.
    @Test func pruneAbortsAnAbandonedUpload() async throws {
        let (server, project, key, _, recordText) = try await killedUpload("abandoned", seed: 46)
        let record = try JSONSerialization.jsonObject(with: Data(recordText.utf8)) as? [String: Any]
        let uploadID = try #require(record?["uploadID"] as? String)
        let aws = AWSCLI(server: server)
        let before = try await aws.run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test", "--prefix", key])
        try #require(before.stdout.contains(uploadID), "\(before)")
        // `syncr cache` shows the upload under way, not an entry without a record.
        let listing = try await project.run(["cache", "--cache", ".syncr/cache"])
        #expect(listing.stdout.contains("upload") && listing.stdout.contains("multipart unfinished")
                && listing.stdout.contains("s3://syncr-test/\(key)"), "\(listing.stdout)")

        try "version: 1\ndownloads: []\n".write(to: project.file("other.yml"), atomically: true, encoding: .utf8)
        // Without credentials the upload cannot be aborted: the entry stays (forgetting it would
        // leave its parts billed in the store), and the message says how to abort it by hand.
        var noCredentials = server.environment
        noCredentials["AWS_ACCESS_KEY_ID"] = ""
        noCredentials["AWS_SECRET_ACCESS_KEY"] = ""
        let refused = try await project.run(["cache", "prune", "--cache", ".syncr/cache", "other.yml"], environment: noCredentials)
        #expect(refused.exitCode == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("could not abort the multipart upload syncr left at s3://syncr-test/\(key)"),
                "\(refused.stderr)")
        #expect(refused.stderr.contains("no S3 credentials"), "the reason: \(refused.stderr)")
        #expect(refused.stderr.contains("--bucket syncr-test --key \(key) --upload-id \(uploadID)"), "\(refused.stderr)")
        // At the store's own endpoint: without it, the command would go to AWS.
        #expect(refused.stderr.contains(": aws --endpoint-url \(server.endpoint) s3api abort-multipart-upload"), "\(refused.stderr)")
        #expect(refused.stdout.contains("1 could not be removed"), "\(refused.stdout)")
        let left = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(left.contains { $0.hasSuffix(".multipart") }, "the record of the upload stays: \(left)")
        let still = try await aws.run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test", "--prefix", key])
        #expect(still.stdout.contains(uploadID), "\(still)")

        let prune = try await project.run(["cache", "prune", "--cache", ".syncr/cache", "other.yml"], environment: server.environment)
        #expect(prune.exitCode == 0, "\(prune.stdout)\(prune.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: project.file(".syncr/cache").path)
        #expect(!names.contains { $0.hasSuffix(".multipart") }, "\(names)")
        let after = try await aws.run(["s3api", "list-multipart-uploads", "--bucket", "syncr-test", "--prefix", key])
        #expect(after.exitCode == 0, "\(after.stderr)")
        #expect(!after.stdout.contains(uploadID), "\(after.stdout)")
    }
}
