import Foundation
import Testing

/// `unzip: true` downloads: fetched, verified, unpacked into a staging folder and swapped in.
@Suite("unpacked downloads", .timeLimit(.minutes(5)))
struct UnpackDownloadTests {
    /// Makes `release/` with a few files under `www/` and packs it with the given command.
    private func makeRelease(_ www: TemporaryDirectory, seed: UInt64, extraFile: Bool = true) throws -> URL {
        let release = www.appending("release")
        try? FileManager.default.removeItem(at: release)
        try FileManager.default.createDirectory(at: release.appendingPathComponent("bin"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: release.appendingPathComponent("share/empty"), withIntermediateDirectories: true)
        try makeFile(path: release.appendingPathComponent("bin/tool"), size: 200_000, seed: seed)
        chmod(release.appendingPathComponent("bin/tool").path, 0o755)
        try makeFile(path: release.appendingPathComponent("README"), size: 3_000, seed: seed + 1)
        if extraFile { try makeFile(path: release.appendingPathComponent("share/data.bin"), size: 1 << 20, seed: seed + 2) }
        return release
    }

    /// Every file's relative path, size and SHA-256, and every folder, under `root`.
    private func tree(_ root: URL) async throws -> [String: String] {
        var result: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let rel = enumerator?.nextObject() as? String {
            let full = root.appendingPathComponent(rel)
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: full.path, isDirectory: &isDir)
            result[rel] = isDir.boolValue ? "dir" : try await sha256(file: full)
        }
        return result
    }

    /// A file `strip_components` leaves out (as tar does) is said, in the log and the report:
    /// a release whose layout went flat lost its files without a word.
    @Test func filesLeftOutByStripComponentsAreSaid() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        _ = try makeRelease(www, seed: 71)
        try "top".write(to: www.url.appendingPathComponent("NOTES.txt"), atomically: true, encoding: .utf8)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "NOTES.txt", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.tar.gz")), to: vendor/tool, unzip: true, strip_components: 1 }"])
        let r = try await project.run(["apply", "--report", "r.json"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        let said = "unpacked, but strip_components 1 left out 1 file with no more path than that: NOTES.txt"
        #expect(r.stderr.contains(said), "\(r.stderr)")
        #expect(try String(contentsOf: project.file("r.json"), encoding: .utf8).contains(said))
    }

    /// A folder syncr has no record of unpacking is not swapped out while it holds what the
    /// archive does not bring back: the swap deleted it whole, the user's files with it. The
    /// plan says so; a folder the archive covers is replaced, as a file would be.
    @Test func aFolderSyncrDidNotUnpackIsKeptWhenItHoldsMore() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        _ = try makeRelease(www, seed: 74)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.tar.gz")), to: vendor/tool, unzip: true, strip_components: 1 }"])
        let notes = project.file("vendor/tool/notes.txt")
        try FileManager.default.createDirectory(at: project.file("vendor/tool/bin"), withIntermediateDirectories: true)
        try "precious".write(to: notes, atomically: true, encoding: .utf8)
        let plan = try await project.run(["plan"])
        #expect(plan.stdout.contains("a folder syncr has no record of unpacking is there"), "\(plan.stdout)")
        let r = try await project.run(["apply"])
        #expect(r.exitCode == 1, "\(r.stderr)")
        #expect(r.stderr.contains("vendor/tool: a folder syncr did not unpack is there, holding notes.txt, which the archive does not"),
                "\(r.stderr)")
        #expect(try String(contentsOf: notes, encoding: .utf8) == "precious")
        #expect(!project.exists("vendor/tool/README"), "nothing was swapped in")
        // Without the file the archive does not hold, the folder is replaced.
        try FileManager.default.removeItem(at: notes)
        let again = try await project.run(["apply"])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(project.exists("vendor/tool/README"))
        // Unpacked by syncr now: a file added later goes with the next unpack, as syncr-manifest(5) says.
        try "later".write(to: notes, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: project.file("vendor/tool/README"))
        let restored = try await project.run(["apply"])
        #expect(restored.exitCode == 0, "\(restored.stderr)")
        #expect(project.exists("vendor/tool/README") && !project.exists("vendor/tool/notes.txt"))
    }

    /// A version that fails to unpack (here: not an archive at all) leaves the folder syncr
    /// unpacked before, and syncr's: the failure dropped the only record that said so, and the
    /// next version, lacking a file of the old, was refused as if someone else's folder were
    /// there, after a plan that said so.
    @Test func aFolderStaysSyncrsAfterAVersionThatFailedToUnpack() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        _ = try makeRelease(www, seed: 75)
        let archive = www.url.appendingPathComponent("tool.tar.gz")
        func pack() async throws {
            try? FileManager.default.removeItem(at: archive)
            let r = try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "release"], cwd: www.url)
            try #require(r.exitCode == 0)
        }
        try await pack()
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.tar.gz")), to: vendor/tool, unzip: true, strip_components: 1, retries: 0 }"])
        let first = try await project.run(["apply"])
        try #require(first.exitCode == 0, "\(first.stderr)")

        try makeFile(path: archive, size: 5_000, seed: 76)
        let broken = try await project.run(["apply"])
        #expect(broken.exitCode == 1, "\(broken.stderr)")
        #expect(project.exists("vendor/tool/share/data.bin"), "the folder stays as it was")
        let plan = try await project.run(["plan"])
        #expect(!plan.stdout.contains("no record of unpacking"), "\(plan.stdout)")

        _ = try makeRelease(www, seed: 77, extraFile: false)
        try await pack()
        let fixed = try await project.run(["apply"])
        #expect(fixed.exitCode == 0, "\(fixed.stderr)")
        #expect(project.exists("vendor/tool/README") && !project.exists("vendor/tool/share/data.bin"))
    }

    @Test func aTarballIsUnpackedSkippedRestoredAndReplaced() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let release = try makeRelease(www, seed: 70)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.tar.gz")), to: vendor/tool, unzip: true, strip_components: 1 }"])

        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        #expect(try await tree(project.file("vendor/tool")) == (try await tree(release)))
        var st = stat()
        stat(project.file("vendor/tool/bin/tool").path, &st)
        #expect(st.st_mode & 0o111 != 0, "the executable bit is kept")

        let plan = try await project.run(["plan", "--json", "--detailed-exitcode"])
        #expect(plan.exitCode == 0, "unpacked and unchanged: nothing to do")

        // Someone edits the unpacked folder: it is unpacked again from the cached archive.
        try "tampered".write(to: project.file("vendor/tool/README"), atomically: true, encoding: .utf8)
        let changed = try await project.run(["plan", "--json"])
        let item = try #require(items(try jsonObject(changed.stdout)).first)
        #expect(item["action"] as? String == "resume")
        #expect(item["bytes"] as? Int == 0)
        #expect(item["reason"] as? String == "the folder was changed since it was unpacked: it is replaced as a whole, and what was added to it or changed there goes; unpacking again from the cache", "\(item)")
        let table = try await project.run(["plan"])
        #expect(table.stdout.contains("resume   vendor/tool") && !table.stdout.contains("from byte"), "\(table.stdout)")
        let before = try await nginx.settledAccessLog().filter { $0.method == "GET" }.count
        let again = try await project.run(["apply"])
        #expect(again.exitCode == 0)
        // Nothing was fetched: no speed of 0 B/s, which reads as a stalled transfer.
        #expect(again.stderr.contains("done resume vendor/tool: all ") && again.stderr.contains(" from the cache, nothing fetched"),
                "\(again.stderr)")
        #expect(try await nginx.settledAccessLog().filter { $0.method == "GET" }.count == before, "no download")
        #expect(try await tree(project.file("vendor/tool")) == (try await tree(release)))

        // A new release without share/data.bin replaces the folder as a whole.
        let next = try makeRelease(www, seed: 80, extraFile: false)
        #expect(try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "release"], cwd: www.url).exitCode == 0)
        #expect(try await project.run(["apply"]).exitCode == 0)
        #expect(try await tree(project.file("vendor/tool")) == (try await tree(next)))
        #expect(!project.exists("vendor/tool/share/data.bin"))
    }

    /// Where folders cannot be swapped in one step, the old one is moved aside first: a run
    /// killed between that and the move of the new one left no folder in place, and the next
    /// run removed the old one before it knew whether it could put a new one there. Played here
    /// by moving the folder aside by hand; the next run cannot download (404): the old folder
    /// is back.
    @Test func theOldFolderMovedAsideByAKilledRunComesBackIfTheNextRunFails() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let release = try makeRelease(www, seed: 95)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "tool.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.tar.gz")), to: vendor/tool, unzip: true, strip_components: 1, retries: 0 }"])
        #expect(try await project.run(["apply"]).exitCode == 0)
        let cache = project.folder.appending(".syncr/cache")
        let data = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.path).first { $0.hasSuffix(".data") })
        let key = String(data.prefix(32))
        try FileManager.default.removeItem(at: cache.appendingPathComponent(data))
        try FileManager.default.moveItem(at: project.file("vendor/tool"), to: project.file("vendor/.syncr-unpack-\(key).old"))
        try FileManager.default.removeItem(at: www.appending("tool.tar.gz"))
        let failed = try await project.run(["apply"])
        #expect(failed.exitCode == 1, "\(failed.stderr)")
        #expect(try await tree(project.file("vendor/tool")) == (try await tree(release)), "the old folder is back")
        #expect(!project.exists("vendor/.syncr-unpack-\(key).old"))
    }

    @Test func aZipIsUnpacked() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let release = try makeRelease(www, seed: 90)
        let pack = try await runProcess(executable: "zip", arguments: ["-qr", "tool.zip", "."], cwd: release)
        try #require(pack.exitCode == 0)
        try FileManager.default.moveItem(at: release.appendingPathComponent("tool.zip"), to: www.appending("tool.zip"))
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/tool.zip")), to: tool/, unzip: true }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await tree(project.file("tool")) == (try await tree(release)))
    }

    @Test func aMaliciousArchiveLeavesTheOldFolderAndNothingOutside() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let make = """
            import zipfile
            with zipfile.ZipFile('evil.zip', 'w') as z:
                z.writestr('ok.txt', 'fine')
                z.writestr('../escaped.txt', 'gotcha')
            """
        #expect(try await runProcess(executable: "python3", arguments: ["-c", make], cwd: www.url).exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("out/keep"), withIntermediateDirectories: true)
        try "old".write(to: project.file("out/keep/old.txt"), atomically: true, encoding: .utf8)
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/evil.zip")), to: out/keep, unzip: true }"])
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("../escaped.txt"))
        #expect(try String(contentsOf: project.file("out/keep/old.txt"), encoding: .utf8) == "old")
        #expect(!project.exists("out/escaped.txt") && !project.exists("escaped.txt"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: project.file("out").path)
        #expect(leftovers == ["keep"], "no staging folder left behind: \(leftovers)")
    }
}
