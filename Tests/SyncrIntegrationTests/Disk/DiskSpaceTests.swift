#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A full disk or a read-only one, on a small tmpfs mounted by the test: a clear error for the
/// entry affected, the others finish, nothing partial at the destination, and the next run
/// (after space is freed) continues where this one stopped.
@Suite("disk full and read-only", .serialized, .timeLimit(.minutes(5)),
       .enabled(if: Tmpfs.canRun, "mounting a tmpfs needs root (CI runs the tests as root)"))
struct DiskSpaceTests {
    static let big = 8 << 20

    /// `www/small.bin` (100 kB) and `www/big.bin` (8 MiB), served by nginx.
    /// `/slow/` sends 2 MiB/s per request.
    private func serve() async throws -> (TemporaryDirectory, Nginx) {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("small.bin"), size: 100_000, seed: 11)
        try makeFile(path: www.appending("big.bin"), size: Self.big, seed: 12)
        return (www, try await Nginx.start(root: www.url, options: .init(slowRate: 2 << 20)))
    }

    private func item(_ output: String, _ suffix: String) throws -> [String: Any] {
        try #require(items(try jsonObject(output)).first { ($0["to"] as? String)?.hasSuffix(suffix) == true },
                     "no item for \(suffix) in \(output)")
    }

    private func same(_ a: URL, _ b: String) async throws -> Bool {
        try await sha256(file: a) == (try await sha256(file: URL(fileURLWithPath: b)))
    }

    private func leftovers(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(".syncr-") }
    }

    @Test func cacheFillsUpMidTransferThenTheNextRunResumes() async throws {
        let (www, nginx) = try await serve()
        defer { nginx.stop() }
        let cache = try Tmpfs(megabytes: 4)
        let project = try Project()
        // One entry only: another one sharing the full cache may fail the same way (its record
        // or bytes need room there too); that the others finish is checked where the failing
        // entry leaves the cache's space free (below).
        try project.writeManifest(defaults: "{ retries: 1, timeout: 5s, connections: 1 }", downloads: [
            "{ url: \(nginx.url("/big.bin")), to: out/big.bin }",
        ])
        let first = try await project.run(["apply", "--json", "--cache", cache.path])
        #expect(first.exitCode == 1, "\(first.stderr)")
        let failed = try item(first.stdout, "big.bin")
        let error = try #require(failed["error"] as? String)
        #expect(error.hasPrefix("cannot write to the cache in \(cache.path): No space left on device"), "\(error)")
        #expect(error.contains("downloaded so far is kept") && error.contains("run again to resume"), "\(error)")
        #expect(!project.exists("out/big.bin"), "nothing partial at the destination")
        #expect(leftovers(project.file("out").path).isEmpty)

        // Still full: apply says so before it starts (the record tells the size), and the same
        // entry fails the same way without losing what is kept.
        let again = try await project.run(["apply", "--cache", cache.path])
        #expect(again.exitCode == 1)
        #expect(again.stderr.contains("syncr: warning: downloads need "), "\(again.stderr)")
        #expect(again.stderr.contains(" in \(cache.path) but "), "\(again.stderr)")

        let plan = try await project.run(["plan", "--json", "--cache", cache.path])
        let planned = try item(plan.stdout, "big.bin")
        #expect(planned["action"] as? String == "resume", "\(plan.stdout)")
        let offset = try #require(planned["offset"] as? Int)
        #expect(offset > 0 && offset < Self.big)

        try cache.resize(megabytes: 64)
        let second = try await project.run(["apply", "--json", "--cache", cache.path])
        #expect(second.exitCode == 0, "\(second.stderr)")
        let transferred = try #require(try item(second.stdout, "big.bin")["transferred"] as? Int)
        #expect(transferred == Self.big - offset, "the rerun fetched only what was missing")
        #expect(try await same(project.file("out/big.bin"), www.appending("big.bin").path))
    }

    @Test func aCacheTooSmallForThePreallocationFailsUpFrontAndThePlanWarns() async throws {
        let (www, nginx) = try await serve()
        defer { nginx.stop() }
        let cache = try Tmpfs(megabytes: 4)
        let project = try Project()
        // The large file comes slowly, so that the first answer's bytes (which arrive before its
        // size is known and the file can be preallocated) do not fill the cache for the other.
        try project.writeManifest(defaults: "{ retries: 1, timeout: 5s, jobs: 1, connections: 4, min_split: 1MiB }", downloads: [
            "{ url: \(nginx.url("/small.bin")), to: out/small.bin }",
            "{ url: \(nginx.url("/slow/big.bin")), to: out/big.bin }",
        ])
        let planText = try await project.run(["plan", "--cache", cache.path])
        #expect(planText.stdout.contains("warning: downloads need 8.1 MiB in \(cache.path) but 4.0 MiB is free"),
                "\(planText.stdout)")
        let planJSON = try jsonObject(try await project.run(["plan", "--json", "--cache", cache.path]).stdout)
        let warnings = try #require(planJSON["warnings"] as? [String])
        #expect(warnings.count == 1 && warnings[0].contains(cache.path), "\(warnings)")

        let first = try await project.run(["apply", "--json", "--cache", cache.path])
        #expect(first.exitCode == 1, "\(first.stderr)")
        #expect(try item(first.stdout, "small.bin")["status"] as? String == "ok")
        let error = try #require(try item(first.stdout, "big.bin")["error"] as? String)
        #expect(error.hasPrefix("not enough space in \(cache.path) for out/big.bin: need "), "\(error)")
        #expect(error.hasSuffix(" MiB free; free space and run again"), "\(error)")
        #expect(!project.exists("out/big.bin"))

        try cache.resize(megabytes: 64)
        let second = try await project.run(["apply", "--cache", cache.path])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try await same(project.file("out/big.bin"), www.appending("big.bin").path))
    }

    @Test func aFullDestinationOnAnotherFileSystemIsLeftAsItWas() async throws {
        let (www, nginx) = try await serve()
        defer { nginx.stop() }
        let disk = try Tmpfs(megabytes: 4)
        let old = Data("the old version\n".utf8)
        try old.write(to: URL(fileURLWithPath: disk.at("big.bin")))
        chmod(disk.at("big.bin"), 0o666)
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 1, timeout: 5s, jobs: 1 }", downloads: [
            "{ url: \(nginx.url("/small.bin")), to: out/small.bin }",
            "{ url: \(nginx.url("/big.bin")), to: \(disk.at("big.bin")), allow_outside: true }",
        ])
        let first = try await project.run(["apply", "--json"])
        #expect(first.exitCode == 1, "\(first.stderr)")
        #expect(try item(first.stdout, "small.bin")["status"] as? String == "ok")
        let error = try #require(try item(first.stdout, "big.bin")["error"] as? String)
        #expect(error.contains("cannot copy the finished file into \(disk.path): No space left on device"), "\(error)")
        #expect(error.contains("complete in the cache"), "\(error)")
        #expect(FileManager.default.contents(atPath: disk.at("big.bin")) == old, "the destination is untouched")
        #expect(leftovers(disk.path).isEmpty, "the copy's temporary file is removed")

        try disk.resize(megabytes: 64)
        // Under umask 077 a new file would be 0600, so 0666 below can only be the kept mode.
        let second = try await project.run(["apply", "--json"], umask: 0o077)
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try item(second.stdout, "big.bin")["transferred"] as? Int == 0, "moved from the cache, not fetched again")
        #expect(try await same(URL(fileURLWithPath: disk.at("big.bin")), www.appending("big.bin").path))
        var st = stat()
        #expect(stat(disk.at("big.bin"), &st) == 0 && st.st_mode & 0o777 == 0o666, "the replaced file keeps its mode, which the umask would have narrowed")
    }

    /// The disk fills while the archive is unpacked (here it runs out of inodes, which the
    /// sizes checked up front cannot see): a no_space failure, as every full disk is, and the
    /// old folder stays.
    @Test func aDiskThatFillsDuringTheUnpackIsANoSpaceFailure() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let release = try www.makeDirectory("release")
        for i in 0..<40 { try Data("file \(i)\n".utf8).write(to: release.appendingPathComponent("f\(i).txt")) }
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "release.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let disk = try Tmpfs(megabytes: 4, inodes: 20)
        try FileManager.default.createDirectory(atPath: disk.at("tree"), withIntermediateDirectories: true)
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: disk.at("tree/old.txt")))
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(nginx.url("/release.tar.gz")), to: \(disk.at("tree")), allow_outside: true, unzip: true, strip_components: 1 }",
        ])
        let first = try await project.run(["apply", "--json"])
        #expect(first.exitCode == 1)
        let item = try #require(items(try jsonObject(first.stdout)).first)
        #expect(item["error_code"] as? String == "no_space", "\(item)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.at("tree")) == ["old.txt"])
    }

    @Test func anUnpackThatDoesNotFitLeavesTheOldFolder() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let release = try www.makeDirectory("release")
        try makeFile(path: release.appendingPathComponent("a.bin"), size: 3 << 20, seed: 21)
        try makeFile(path: release.appendingPathComponent("b.bin"), size: 3 << 20, seed: 22)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "release.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let disk = try Tmpfs(megabytes: 4)
        try FileManager.default.createDirectory(atPath: disk.at("tree"), withIntermediateDirectories: true)
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: disk.at("tree/old.txt")))
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(nginx.url("/release.tar.gz")), to: \(disk.at("tree")), allow_outside: true, unzip: true, strip_components: 1 }",
        ])
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 1)
        // Refused from the sizes the tar headers declare, before the disk fills up.
        #expect(first.stderr.contains("free on the file system of \(disk.path); make room there and run again")
                && first.stderr.contains("left as it was"), "\(first.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.at("tree")) == ["old.txt"])
        #expect(leftovers(disk.path).isEmpty, "the staging folder is removed")

        try disk.resize(megabytes: 64)
        // The old folder was made by hand and holds a file the archive does not: it is not
        // replaced until that file is moved away (the swap would delete it).
        let kept = try await project.run(["apply"])
        #expect(kept.exitCode == 1 && kept.stderr.contains("a folder syncr did not unpack is there, holding old.txt"), "\(kept.stderr)")
        try FileManager.default.removeItem(atPath: disk.at("tree/old.txt"))
        let second = try await project.run(["apply", "--json"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(items(try jsonObject(second.stdout)).first?["transferred"] as? Int == 0, "unpacked from the cached archive")
        #expect(try await same(URL(fileURLWithPath: disk.at("tree/b.bin")), release.appendingPathComponent("b.bin").path))
    }

    @Test func aReadOnlyDestinationIsAClearErrorAndTheOthersFinish() async throws {
        let (www, nginx) = try await serve()
        defer { nginx.stop() }
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "small.tar.gz", "small.bin"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let disk = try Tmpfs(megabytes: 16)
        try disk.setReadOnly(true)
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(nginx.url("/small.bin")), to: out/small.bin }",
            "{ url: \(nginx.url("/big.bin")), to: \(disk.at("big.bin")), allow_outside: true }",
            "{ url: \(nginx.url("/small.tar.gz")), to: \(disk.at("tree")), allow_outside: true, unzip: true }",
        ])
        let first = try await project.run(["apply", "--json"])
        #expect(first.exitCode == 1, "\(first.stderr)")
        #expect(try item(first.stdout, "small.bin")["status"] as? String == "ok")
        let fileError = try #require(try item(first.stdout, "big.bin")["error"] as? String)
        #expect(fileError.contains(disk.path) && fileError.contains("Read-only file system"), "\(fileError)")
        let treeError = try #require(try item(first.stdout, "/tree")["error"] as? String)
        #expect(treeError.contains(disk.path) && treeError.contains("Read-only file system"), "\(treeError)")

        try disk.setReadOnly(false)
        let second = try await project.run(["apply", "--json"])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(try item(second.stdout, "big.bin")["transferred"] as? Int == 0)
        #expect(try item(second.stdout, "/tree")["transferred"] as? Int == 0)
        #expect(try await same(URL(fileURLWithPath: disk.at("big.bin")), www.appending("big.bin").path))
        #expect(try await same(URL(fileURLWithPath: disk.at("tree/small.bin")), www.appending("small.bin").path))
    }
}
