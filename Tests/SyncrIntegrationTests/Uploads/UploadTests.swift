#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `syncr apply` with `uploads:` against real receivers: nginx WebDAV for PUT, the fault server
/// (which parses multipart forms with Python's standard library) for POST and for failures.
@Suite("uploads", .timeLimit(.minutes(5)))
struct UploadTests {
    private func write(_ project: Project, _ yaml: String) throws {
        try yaml.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
    }

    @Test func putAFileThenSkipItUntilItChangesOrGoesMissing() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("build"), withIntermediateDirectories: true)
        try makeFile(path: project.file("build/app.tar"), size: 5 << 20, seed: 51)
        try write(project, """
            version: 1
            uploads:
              - { from: build/app.tar, to: "\(nginx.url("/upload/app.tar"))", method: put }
            """)
        let first = try await project.run(["apply", "--json"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let sent = nginx.uploadDirectory.appendingPathComponent("app.tar")
        #expect(try await sha256(file: sent) == (try await sha256(file: project.file("build/app.tar"))))
        let item = try #require(items(try jsonObject(first.stdout)).first)
        #expect(item["kind"] as? String == "upload")
        #expect(item["from"] as? String == "build/app.tar")
        #expect(item["action"] as? String == "upload")
        #expect(item["status"] as? String == "ok")
        #expect(item["bytes"] as? Int == 5 << 20)

        let plan = try await project.run(["plan", "--json", "--detailed-exitcode"])
        #expect(plan.exitCode == 0, "unchanged: nothing to do")
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "skip")

        #expect(try await project.run(["plan", "--json", "--force"]).stdout.contains("\"action\":\"upload\""))

        // The remote copy disappears: HEAD says 404, so it is sent again.
        try FileManager.default.removeItem(at: sent)
        let missing = try await project.run(["plan", "--json"])
        let again = try #require(items(try jsonObject(missing.stdout)).first)
        #expect(again["action"] as? String == "upload")
        #expect((again["reason"] as? String)?.contains("missing") == true)

        // The local file changes.
        #expect(try await project.run(["apply"]).exitCode == 0)
        try makeFile(path: project.file("build/app.tar"), size: 5 << 20, seed: 52)
        let changed = try await project.run(["plan", "--json"])
        #expect((items(try jsonObject(changed.stdout)).first?["reason"] as? String)?.contains("changed") == true)
    }

    @Test func putAFolderMirrorsTheTree() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let site = project.file("build/site")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("assets/img"), withIntermediateDirectories: true)
        try makeFile(path: site.appendingPathComponent("index.html"), size: 3000, seed: 53)
        try makeFile(path: site.appendingPathComponent("assets/app.js"), size: 70_000, seed: 54)
        try makeFile(path: site.appendingPathComponent("assets/img/a b.png"), size: 1234, seed: 55)
        try write(project, """
            version: 1
            uploads:
              - { from: build/site/, to: "\(nginx.url("/upload/site/"))", method: put }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for name in ["index.html", "assets/app.js", "assets/img/a b.png"] {
            let arrived = nginx.uploadDirectory.appendingPathComponent("site/" + name)
            #expect(try await sha256(file: arrived) == (try await sha256(file: site.appendingPathComponent(name))), "\(name)")
        }
        #expect(try await project.run(["plan", "--detailed-exitcode"]).exitCode == 0)
    }

    /// A folder's `to:` with a query (an upload endpoint's `?token=`): each file's path goes
    /// before the query, which every request keeps. Appended after it, every file went to one
    /// URL, each replacing the last, and every later plan wanted to send them again.
    @Test func putAFolderToAURLWithAQueryKeepsTheQuery() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let site = project.file("site")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try makeFile(path: site.appendingPathComponent("a.txt"), size: 100, seed: 58)
        try makeFile(path: site.appendingPathComponent("sub/b.txt"), size: 200, seed: 59)
        try write(project, """
            version: 1
            uploads:
              - { from: site/, to: "\(nginx.url("/upload/q?token=abc12345#frag"))", method: put }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for name in ["a.txt", "sub/b.txt"] {
            let arrived = nginx.uploadDirectory.appendingPathComponent("q/" + name)
            #expect(try await sha256(file: arrived) == (try await sha256(file: site.appendingPathComponent(name))), "\(name)")
        }
        #expect(try await project.run(["plan", "--detailed-exitcode"]).exitCode == 0)
    }

    /// Links in a folder sent file by file: one to a file is sent as the file; one to a folder,
    /// or to nothing, cannot be, and plan and apply say so, naming them (they were left out
    /// without a word).
    @Test func linksThatCannotBeSentAreNamed() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let site = project.file("site")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try makeFile(path: site.appendingPathComponent("a.txt"), size: 100, seed: 56)
        try makeFile(path: site.appendingPathComponent("sub/b.txt"), size: 100, seed: 57)
        try FileManager.default.createSymbolicLink(atPath: site.appendingPathComponent("file-link").path, withDestinationPath: "a.txt")
        try FileManager.default.createSymbolicLink(atPath: site.appendingPathComponent("folder-link").path, withDestinationPath: "sub")
        try FileManager.default.createSymbolicLink(atPath: site.appendingPathComponent("sub/dangling").path, withDestinationPath: "nowhere")
        try write(project, """
            version: 1
            uploads:
              - { from: site/, to: "\(nginx.url("/upload/site/"))", method: put }
            """)
        let said = "2 links in the folder not sent, leading to a folder or to nothing (a link to a file is sent as the file): "
            + "folder-link, sub/dangling"
        let plan = try await project.run(["plan"])
        #expect(plan.stdout.contains("not uploaded before; " + said), "\(plan.stdout)")
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("note: site/ -> ") && result.stderr.contains(said), "\(result.stderr)")
        let item = try #require(items(try jsonObject(result.stdout)).first)
        #expect((item["notes"] as? [String])?.contains(said) == true, "\(item)")
        let sent = nginx.uploadDirectory.appendingPathComponent("site/file-link")
        #expect(try await sha256(file: sent) == (try await sha256(file: site.appendingPathComponent("a.txt"))))
        #expect(!FileManager.default.fileExists(atPath: nginx.uploadDirectory.appendingPathComponent("site/folder-link").path))
    }

    /// A folder of small files goes up `jobs` files at once, not one after another: behind a
    /// proxy that adds latency (as the internet does), HTTP/1.1 PUTs in flight together each
    /// hold a connection, and the proxy counts them. Never more than `jobs`.
    @Test func aFolderGoesUpJobsFilesAtOnce() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let proxy = try await ThrottleProxy.start(targetPort: nginx.port, latencyMilliseconds: 40)
        defer { proxy.stop() }
        let project = try Project()
        let site = project.file("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        for i in 0..<24 { try makeFile(path: site.appendingPathComponent("f\(i).bin"), size: 2000 + i, seed: UInt64(100 + i)) }
        try write(project, """
            version: 1
            defaults: { jobs: 4 }
            uploads:
              - { from: site/, to: "\(proxy.url(nginx.url("/upload/site/")))", method: put }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for i in 0..<24 {
            let name = "f\(i).bin"
            let arrived = nginx.uploadDirectory.appendingPathComponent("site/" + name)
            #expect(try await sha256(file: arrived) == (try await sha256(file: site.appendingPathComponent(name))), "\(name)")
        }
        let stats = try proxy.stats()
        #expect((2...4).contains(stats.maxOpen), "24 files with jobs: 4 in flight together, at most 4: \(stats)")
        #expect(try await project.run(["plan", "--detailed-exitcode"]).exitCode == 0)
    }

    @Test func postAFileWithFieldsAsAMultipartForm() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try makeFile(path: project.file("app.tar"), size: 3 << 20, seed: 56)
        try write(project, """
            version: 1
            uploads:
              - from: app.tar
                to: \(server.url("/api/upload"))
                field: artifact
                fields: { build: "${SYNCR_IT_BUILD}", channel: nightly }
                headers: { Authorization: "Bearer ${SYNCR_IT_UPLOAD_TOKEN}" }
            """)
        let env = ["SYNCR_IT_BUILD": "build-7781", "SYNCR_IT_UPLOAD_TOKEN": "up-tok-5c6d7e8f"]
        let result = try await project.run(["apply", "--json"], environment: env)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("up-tok-5c6d7e8f"))
        // apply counts the file, as plan does, not the form around it (which is larger).
        let sent = try #require(items(try jsonObject(result.stdout)).first)
        #expect(sent["size"] as? Int == 3 << 20 && sent["transferred"] as? Int == 3 << 20, "\(sent)")
        #expect(result.stderr.contains(" 3.0 MiB sent in "), "\(result.stderr)")
        #expect(try await server.stats()["/api/upload"].bytesReceived > 3 << 20, "the form is larger than its file")
        let summary = try server.postSummary(path: "/api/upload")
        #expect(summary.fields == [["build", "build-7781"], ["channel", "nightly"]])
        let file = try #require(summary.files.first)
        #expect(file.name == "artifact" && file.filename == "app.tar")
        #expect(file.contentType == "application/x-tar")
        #expect(try await sha256(file: server.uploadDirectory.appendingPathComponent(file.saved))
                == (try await sha256(file: project.file("app.tar"))))
        let stats = try await server.stats()["/api/upload"]
        #expect(stats.chunked == 0, "sent with Content-Length")

        let second = try await project.run(["apply", "--json"], environment: env)
        #expect(items(try jsonObject(second.stdout)).first?["status"] as? String == "skipped")
        #expect(try await server.stats()["/api/upload"].posts == 1)
    }

    /// A folder holding `café` composed and decomposed: two files on disk, one name to the
    /// record (its keys compare as Unicode does), so a change to one could pass unseen. The
    /// entry fails, naming both by their bytes.
    @Test func namesThatDifferOnlyInNormalizationAreRefused() async throws {
        let project = try Project()
        let site = project.file("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try Data("composed\n".utf8).write(to: URL(fileURLWithPath: site.path + "/caf\u{E9}.txt"))
        try Data("decomposed\n".utf8).write(to: URL(fileURLWithPath: site.path + "/cafe\u{301}.txt"))
        try write(project, """
            version: 1
            uploads:
              - { from: site/, to: "http://127.0.0.1:9/site/", method: put }
            """)
        let plan = try await project.run(["plan"])
        #expect(plan.exitCode == 1, "\(plan.stdout)")
        #expect(plan.stdout.contains("holds two names that differ only in their Unicode normalization"), "\(plan.stdout)")
        #expect(plan.stdout.contains("63 61 66 c3 a9 2e 74 78 74") && plan.stdout.contains("63 61 66 65 cc 81 2e 74 78 74"), "\(plan.stdout)")
    }

    /// A name that is not UTF-8 (a file made on a system with another encoding) is refused,
    /// shown with its bytes: it came out repaired (U+FFFD), and the upload failed to read a file
    /// of that name, which does not exist.
    @Test func aNameThatIsNotUTF8IsRefusedShowingItsBytes() async throws {
        let project = try Project()
        let sub = project.file("site/sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try Data("ok\n".utf8).write(to: project.file("site/ok.txt"))
        // The bytes go to open(2) as they are: a Swift String would repair the 0xFF.
        let bad: [UInt8] = Array(sub.path.utf8) + Array("/b".utf8) + [0xFF] + Array("ad.txt".utf8) + [0]
        let fd = bad.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
        try #require(fd >= 0)
        close(fd)
        try write(project, """
            version: 1
            uploads:
              - { from: site/, to: "http://127.0.0.1:9/site/", method: put }
            """)
        let plan = try await project.run(["plan"])
        #expect(plan.exitCode == 1, "\(plan.stdout)")
        #expect(plan.stdout.contains("from: site/sub holds a name that is not UTF-8, b\\xffad.txt; rename it"), "\(plan.stdout)")
    }

    /// A POST answered 303 See Other is done (the server took it and points at a result, as
    /// syncr-manifest(5) says); the result is not fetched, so a failing one fails nothing, and
    /// the bytes sent are the POST's.
    @Test func aPostAnswered303IsDone() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/api/upload", FaultBehaviour(redirectTo: "/results/missing", redirectStatus: 303))
        let project = try Project()
        try makeFile(path: project.file("app.tar"), size: 300_000, seed: 57)
        try write(project, """
            version: 1
            defaults: { retries: 0 }
            uploads:
              - { from: app.tar, to: \(server.url("/api/upload")) }
            """)
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 0, "\(result.stdout)\n\(result.stderr)")
        let item = try #require(items(try jsonObject(result.stdout)).first)
        #expect(item["status"] as? String == "ok" && item["transferred"] as? Int ?? 0 >= 300_000, "\(item)")
        let stats = try await server.stats()
        #expect(stats["/api/upload"].posts == 1)
        #expect(stats["/results/missing"].requests == 0, "the result is not fetched")
    }

    /// A 1 GiB PUT takes no more memory than a 16 MiB one, give or take 64 MiB: the body
    /// flows from disk to the network in fixed buffers. Measured on the syncr process itself.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SYNCR_BIG_TESTS"] == "1", "a 1 GiB upload; set SYNCR_BIG_TESTS=1"))
    func oneGiBPutKeepsMemoryFlat() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        var peaks: [Int] = []
        for size in [16 << 20, 1 << 30] {
            let project = try Project()
            try makeFile(path: project.file("big.bin"), size: size, seed: 5)
            try write(project, """
                version: 1
                uploads:
                  - { from: big.bin, to: "\(nginx.url("/upload/big-\(size).bin"))", method: put }
                """)
            let (result, peak) = try await project.runMeasuringPeakMemory(["apply"])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(try await sha256(file: nginx.uploadDirectory.appendingPathComponent("big-\(size).bin"))
                    == (try await sha256(file: project.file("big.bin"))))
            print("PUT of \(size) bytes: syncr's peak RSS \(peak) KiB")
            peaks.append(peak)
        }
        #expect(peaks[1] - peaks[0] < 64 << 10, "peak RSS \(peaks[0]) KiB for 16 MiB, \(peaks[1]) KiB for 1 GiB")
    }

    /// The real multipart receiver is never skipped: scripts/setup installs it.
    @Test func postToARealMultipartReceiver() async throws {
        try #require(Uploadserver.installed, "the uploadserver package is missing: run scripts/setup (it installs it from PyPI)")
        let dir = try TemporaryDirectory(prefix: "uploadserver")
        let served = try dir.makeDirectory("served")
        let (server, port) = try await Uploadserver.start(directory: served)
        defer { server.terminate(grace: .seconds(2)) }
        let project = try Project()
        try makeFile(path: project.file("release.tar.gz"), size: 6 << 20, seed: 62)
        try write(project, """
            version: 1
            uploads:
              - { from: release.tar.gz, to: "http://127.0.0.1:\(port)/upload", field: files, fields: { note: hello } }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: served.appendingPathComponent("release.tar.gz"))
                == (try await sha256(file: project.file("release.tar.gz"))))
    }

    @Test func postAFolderSendsEveryFileUnderOneField() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        let reports = project.file("reports")
        try FileManager.default.createDirectory(at: reports.appendingPathComponent("unit"), withIntermediateDirectories: true)
        try makeFile(path: reports.appendingPathComponent("summary.json"), size: 900, seed: 57)
        try makeFile(path: reports.appendingPathComponent("unit/junit.xml"), size: 40_000, seed: 58)
        try write(project, """
            version: 1
            uploads:
              - { from: reports, to: "\(server.url("/collect"))", field: files }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let summary = try server.postSummary(path: "/collect")
        #expect(summary.files.map(\.filename) == ["summary.json", "unit/junit.xml"])
        #expect(summary.files.allSatisfy { $0.name == "files" })
    }

    @Test func aRefusedUploadFailsWithTheStatusAndTheServersWords() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/api/upload", FaultBehaviour(status: 413))
        let project = try Project()
        try makeFile(path: project.file("big.bin"), size: 1 << 20, seed: 59)
        try write(project, """
            version: 1
            uploads:
              - { from: big.bin, to: "\(server.url("/api/upload"))" }
            """)
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 1)
        let item = try #require(items(try jsonObject(result.stdout)).first)
        let error = try #require(item["error"] as? String)
        #expect(error.contains("413") && error.contains(server.url("/api/upload")))
        #expect(error.contains("server said"))
        #expect(error.contains("the server takes no request body this large: raise its limit"), "\(error)")
        #expect(try await server.stats()["/api/upload"].posts == 1, "a 413 is not retried")
    }

    @Test func aPostCutOffMidBodyIsNotRepeatedUnlessAllowed() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/p", FaultBehaviour(dropTimes: 1, dropBodyAfter: 100_000))
        try await server.behave(path: "/q", FaultBehaviour(dropTimes: 1, dropBodyAfter: 100_000))
        let project = try Project()
        try makeFile(path: project.file("f.bin"), size: 1 << 20, seed: 60)
        try write(project, """
            version: 1
            uploads:
              - { from: f.bin, to: "\(server.url("/p"))" }
              - { from: f.bin, to: "\(server.url("/q"))", retry: true }
            """)
        let result = try await project.run(["apply", "--json"])
        let all = items(try jsonObject(result.stdout))
        #expect(all[0]["status"] as? String == "failed", "a POST that may have arrived is not sent twice")
        // Said, with the way to allow it: the entry has retries, and a PUT would have been retried.
        #expect((all[0]["error"] as? String)?.contains("not retried: the POST may have reached the server, and sending it again could act twice; set retry: true on the entry if that is safe") == true,
                "\(all[0])")
        #expect(all[1]["status"] as? String == "ok", "retry: true allows it")
        #expect(result.exitCode == 1)
    }

    @Test func aPutCutOffMidBodyIsRetried() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/f.bin", FaultBehaviour(status: 503, retryAfter: "1", statusTimes: 1,
                                                               dropTimes: 1, dropBodyAfter: 200_000))
        let project = try Project()
        try makeFile(path: project.file("f.bin"), size: 1 << 20, seed: 61)
        try write(project, """
            version: 1
            uploads:
              - { from: f.bin, to: "\(server.url("/f.bin"))", method: put }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let uploads = try await server.uploads()
        #expect(uploads.values.contains(1 << 20))
    }

    @Test func aMissingSourceIsAnErrorThatNamesIt() async throws {
        let project = try Project()
        try write(project, """
            version: 1
            uploads:
              - { from: nowhere/app.tar, to: "http://127.0.0.1:9/x" }
            """)
        let plan = try await project.run(["plan"])
        #expect(plan.exitCode == 1)
        #expect(plan.stdout.contains("nowhere/app.tar: no such file or folder"))
    }
}

extension UploadTests {
    /// The archive of a `zip: true` upload that failed is removed: the next run zips the folder
    /// again anyway, and `syncr cache` could only list it as unknown, with no record.
    @Test func aRefusedZippedFolderLeavesNoArchiveInTheCache() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/up/reports.zip", FaultBehaviour(status: 403))
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("reports"), withIntermediateDirectories: true)
        try makeFile(path: project.file("reports/summary.json"), size: 50_000, seed: 66)
        try write(project, """
            version: 1
            defaults: { retries: 0 }
            uploads:
              - { from: reports/, to: "\(server.url("/up/reports.zip"))", method: put, zip: true }
            """)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(try await server.stats()["/up/reports.zip"].requests == 1, "the archive was built and sent")
        let cache = project.folder.appending(".syncr/cache")
        let left = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.contains(".zip") }
        #expect(left.isEmpty, "\(left)")
        let listing = try await project.run(["cache"])
        #expect(!listing.stdout.contains("no record"), "\(listing.stdout)")
    }

    @Test func aZippedFolderIsSentOnceAndRecognisedUnchanged() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let reports = project.file("reports")
        try FileManager.default.createDirectory(at: reports.appendingPathComponent("unit"), withIntermediateDirectories: true)
        try makeFile(path: reports.appendingPathComponent("summary.json"), size: 900, seed: 63)
        try makeFile(path: reports.appendingPathComponent("unit/junit.xml"), size: 40_000, seed: 64)
        try """
            version: 1
            uploads:
              - { from: reports/, to: "\(nginx.url("/upload/reports.zip"))", method: put, zip: true }
            """.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        // Sent and recorded, the archive goes: plan decides from the files' digests, and apply
        // zips the folder again before a send, so a copy of the folder stayed for nothing.
        let cache = project.folder.appending(".syncr/cache")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".zip") } == [])
        let sent = nginx.uploadDirectory.appendingPathComponent("reports.zip")
        let test = try await runProcess(executable: "unzip", arguments: ["-t", sent.path])
        #expect(test.exitCode == 0, "\(test.stdout)")
        #expect(test.stdout.contains("unit/junit.xml"))
        // Touching the files changes nothing in a deterministic zip: the upload is skipped.
        let now = Date()
        try FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: reports.appendingPathComponent("summary.json").path)
        let plan = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(plan.stdout)).first?["action"] as? String == "skip", "\(plan.stdout)")
        // A changed file changes the archive.
        try makeFile(path: reports.appendingPathComponent("summary.json"), size: 901, seed: 65)
        let before = try cacheListing(cache)
        let changed = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(changed.stdout)).first?["action"] as? String == "upload")
        #expect(try cacheListing(cache) == before, "plan writes nothing: it decides from the folder's files")
        #expect(items(try jsonObject(changed.stdout)).first?["reason"] as? String == "1 file changed since the last upload")
        // An archive a killed run left half built (fresh: the kill was a moment ago) goes.
        let key = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".upload") })
            .prefix(32)
        let halfBuilt = cache.appendingPathComponent(".\(key).zip.k1ll3d.tmp")
        try Data(repeating: 7, count: 4096).write(to: halfBuilt)
        // apply builds the archive and sends the new content; the next plan is a skip.
        let second = try await project.run(["apply"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: halfBuilt.path), "a dead run's half-built archive")
        let listing = try await runProcess(executable: "unzip", arguments: ["-v", sent.path])
        #expect(listing.stdout.contains("901"), "\(listing.stdout)")
        let settled = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(settled.stdout)).first?["action"] as? String == "skip", "\(settled.stdout)")
    }

    /// A `zip: true` upload killed while it sends leaves its archive (`<key>.zip`) in the
    /// cache. `syncr cache` lists it as an upload's archive not sent, not as a file of no
    /// record, and the next apply removes it: when the entry is sent again, when it is up to
    /// date (a killed `--force`), where it builds no archive to replace it, and when the entry
    /// has left the manifest.
    @Test func anArchiveAKilledUploadLeftIsNamedAndRemovedByTheNextApply() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("site"), withIntermediateDirectories: true)
        try makeFile(path: project.file("site/index.html"), size: 300_000, seed: 67)
        try write(project, """
            version: 1
            uploads:
              - { from: site/, to: "\(server.url("/up/site.zip"))", method: put, zip: true }
            """)
        let cache = project.folder.appending(".syncr/cache")
        let archives = { try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".zip") } }

        try await killWhileSending(project, server: server, ["apply"])
        try #require(try archives().count == 1, "the kill came after the archive was built")
        let listing = try await project.run(["cache"])
        #expect(listing.stdout.contains("upload  archive not sent"), "\(listing.stdout)")
        #expect(!listing.stdout.contains("no record"), "\(listing.stdout)")
        let sent = try await project.run(["apply"])
        #expect(sent.exitCode == 0, "\(sent.stderr)")
        #expect(try archives() == [], "sent and recorded, no archive stays")
        // The server serves what it took, so that the next plan finds the entry up to date.
        try await server.put(path: "/up/site.zip", from: server.uploadDirectory.appendingPathComponent("up/site.zip"))

        try await killWhileSending(project, server: server, ["apply", "--force"])
        try #require(try archives().count == 1)
        let upToDate = try await project.run(["apply", "--json"])
        #expect(upToDate.exitCode == 0, "\(upToDate.stderr)")
        #expect(items(try jsonObject(upToDate.stdout)).first?["status"] as? String == "skipped", "\(upToDate.stdout)")
        #expect(try archives() == [], "the killed run's archive went with nothing to send")

        // Killed again, and the entry then taken out of the manifest: the next apply, with no
        // `zip:` upload left, removes the archive all the same (it stayed until `cache prune`).
        try await killWhileSending(project, server: server, ["apply", "--force"])
        try #require(try archives().count == 1)
        try write(project, """
            version: 1
            uploads:
              - { from: site/index.html, to: "\(server.url("/up/index.html"))", method: put }
            """)
        let other = try await project.run(["apply"])
        #expect(other.exitCode == 0, "\(other.stderr)")
        #expect(try archives() == [], "a removed entry's archive went too")
    }

    /// Runs `syncr ARGS` with the server holding the PUT's body after its first bytes, and
    /// SIGKILLs it once they arrived: the archive is built and being sent.
    func killWhileSending(_ project: Project, server: FaultServer, _ arguments: [String]) async throws {
        try await server.behave(path: "/up/site.zip", FaultBehaviour(stallTimes: 1, stallBodyAfter: 1000))
        let before = try await server.stats()["/up/site.zip"].bytesReceived
        let run = try BackgroundSyncr(project, arguments)
        let sending = try await poll(timeout: .seconds(60)) {
            try await server.stats()["/up/site.zip"].bytesReceived >= before + 1000 || !run.child.isRunning
        }
        try #require(sending && run.child.isRunning, "\(run.stderr)")
        run.signal(SIGKILL)
        _ = await run.finish()
        try await server.behave(path: "/up/site.zip", FaultBehaviour())
    }

    /// `from: .` holds syncr's own folder (`.syncr/cache`): its records and the archive being
    /// built were sent too, so the upload changed on every run, and a zip of the folder failed
    /// every run after the first ("changed while it was being uploaded"). They are left out.
    @Test func anUploadOfTheFolderHoldingTheCacheLeavesTheCacheOut() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try makeFile(path: project.file("data.txt"), size: 700, seed: 71)
        try """
            version: 1
            uploads:
              - { from: ., to: "\(nginx.url("/upload/all.zip"))", method: put, zip: true }
              - { from: ./, to: "\(nginx.url("/upload/tree/"))", method: put }
            """.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
        for run in 1...2 {
            let applied = try await project.run(["apply"])
            #expect(applied.exitCode == 0, "run \(run): \(applied.stderr)")
        }
        let listing = try await runProcess(executable: "unzip", arguments: ["-Z1", nginx.uploadDirectory.appendingPathComponent("all.zip").path])
        #expect(listing.stdout.split(separator: "\n").sorted() == ["data.txt", "syncr.yml"], "\(listing.stdout)")
        let tree = try FileManager.default.contentsOfDirectory(atPath: nginx.uploadDirectory.appendingPathComponent("tree").path)
        #expect(tree.sorted() == ["data.txt", "syncr.yml"])
        let plan = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(plan.stdout)).map { $0["action"] as? String } == ["skip", "skip"], "\(plan.stdout)")
    }

    /// A zipped upload's archive is not deterministic (`deterministic: false` keeps the files'
    /// times): touching a file changes what would be sent, so it is sent again.
    @Test func aNonDeterministicZipIsSentAgainWhenATimeChanges() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let reports = project.file("reports")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        try makeFile(path: reports.appendingPathComponent("a.txt"), size: 500, seed: 66)
        try """
            version: 1
            uploads:
              - { from: reports/, to: "\(nginx.url("/upload/r.zip"))", method: put, zip: true, deterministic: false }
            """.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let unchanged = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(unchanged.stdout)).first?["action"] as? String == "skip", "\(unchanged.stdout)")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)],
                                              ofItemAtPath: reports.appendingPathComponent("a.txt").path)
        let touched = try await project.run(["plan", "--json"])
        #expect(items(try jsonObject(touched.stdout)).first?["action"] as? String == "upload", "\(touched.stdout)")
    }

    /// What a zip holds besides file contents changes the archive too: a permission bit, an
    /// empty folder, a file replaced by a link to the same bytes. Each is sent again (the plan
    /// saw the same files' SHA-256s and skipped them all).
    @Test func aZippedFolderIsSentAgainWhenPermissionsFoldersOrLinksChange() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let site = project.file("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try Data("#!/bin/sh\necho hi\n".utf8).write(to: site.appendingPathComponent("run.sh"))
        try Data("same bytes\n".utf8).write(to: site.appendingPathComponent("a.txt"))
        try Data("same bytes\n".utf8).write(to: site.appendingPathComponent("b.txt"))
        try """
            version: 1
            uploads:
              - { from: site/, to: "\(nginx.url("/upload/site.zip"))", method: put, zip: true }
            """.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
        func action() async throws -> (String?, String?) {
            let item = items(try jsonObject(try await project.run(["plan", "--json"]).stdout)).first
            return (item?["action"] as? String, item?["reason"] as? String)
        }
        let changes: [(String, () throws -> Void)] = [
            ("chmod +x", { chmod(site.appendingPathComponent("run.sh").path, 0o755) }),
            ("an empty folder", { try FileManager.default.createDirectory(at: site.appendingPathComponent("empty"), withIntermediateDirectories: false) }),
            ("a link in place of a file", {
                try FileManager.default.removeItem(at: site.appendingPathComponent("b.txt"))
                try FileManager.default.createSymbolicLink(atPath: site.appendingPathComponent("b.txt").path, withDestinationPath: "a.txt")
            }),
        ]
        let first = try await project.run(["apply"])
        try #require(first.exitCode == 0, "\(first.stderr)")
        for (name, change) in changes {
            #expect(try await action().0 == "skip", "before \(name)")
            try change()
            let (changed, reason) = try await action()
            #expect(changed == "upload" && reason == "folders, links or permissions changed since the last upload", "\(name): \(reason ?? "")")
            let sent = try await project.run(["apply"])
            #expect(sent.exitCode == 0, "\(name): \(sent.stderr)")
        }
        let listing = try await runProcess(executable: "unzip", arguments: ["-Z", nginx.uploadDirectory.appendingPathComponent("site.zip").path])
        #expect(listing.stdout.contains("-rwxr-xr-x") && listing.stdout.contains("empty/") && listing.stdout.contains("lrwxrwxrwx"),
                "\(listing.stdout)")
        #expect(try await action().0 == "skip")
        // A record written before the shape was kept (an older syncr) cannot vouch for it: the
        // archive is sent once more, and then skipped.
        let cache = project.folder.appending(".syncr/cache")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".upload") })
        let recordURL = cache.appendingPathComponent(name)
        var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: recordURL)) as? [String: Any])
        try #require(record.removeValue(forKey: "sourceShape") != nil)
        try JSONSerialization.data(withJSONObject: record).write(to: recordURL)
        let (older, reason) = try await action()
        #expect(older == "upload" && reason?.contains("written by an older syncr") == true, "\(reason ?? "")")
        #expect(try await project.run(["apply"]).exitCode == 0)
        #expect(try await action().0 == "skip")
    }

    /// The cache folder's names, sizes and modification times.
    func cacheListing(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            return "\(name) \(attributes[.size] ?? 0) \((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
    }
}
