#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock
import SyncrTestSupport
import Testing

/// SIGINT while `apply` hashes or zips a large file: the work stops within a block and the
/// run ends interrupted, instead of reading the file to its end first.
///
/// Each file is 2 TiB and sparse (it takes no disk space): hashing or zipping it whole would
/// take this machine many minutes, beyond the suite's time limit, so a run that did not stop
/// fails the test by never ending in time. The tests wait for a sign (the file open in the
/// process), never for a fixed time, and assert no timing.
@Suite("signals during blocking work", .timeLimit(.minutes(5)))
struct SignalDuringHashTests {
    static let size: off_t = 2 << 40

    /// A sparse file of `size` bytes at `path`.
    func makeSparse(_ path: String) throws {
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(ftruncate(fd, Self.size) == 0)
    }

    /// Runs `apply` and sends SIGINT once it holds a file whose path `matches` open (`doing`
    /// names that work): the run must end interrupted, exit 130, with its entry interrupted and
    /// not failed.
    func applyInterrupted(_ project: Project, doing: String,
                          whenItHolds matches: @escaping @Sendable (String) -> Bool) async throws {
        let run = try BackgroundSyncr(project, ["apply"])
        let signalled = await interrupt(run, whenItHolds: matches)
        let status = await run.finish()
        try #require(signalled, "\(doing) should have been under way: \(run.stderr)")
        #expect(status == 130, "\(run.stderr)")
        #expect(run.stderr.contains("1 interrupted"), "\(run.stderr)")
        #expect(run.stderr.contains("0 failed"), "\(run.stderr)")
    }

    /// Sends SIGINT once `run` holds a file whose path `matches` open; false when it ended (or
    /// a minute passed) first. Watched from a thread of its own, which a busy pool cannot delay.
    func interrupt(_ run: BackgroundSyncr, whenItHolds matches: @escaping @Sendable (String) -> Bool) async -> Bool {
        let child = run.child, pid = run.pid
        let sent = Locked(false)
        _ = await pollOnItsOwnThread(timeout: .seconds(60)) {
            guard child.isRunning else { return true }
            guard holdsOpen(pid: pid, matches) else { return false }
            run.signal(SIGINT)
            sent.withLock { $0 = true }
            return true
        }
        return sent.withLock { $0 }
    }

    /// A destination with no record and a pinned SHA-256 is hashed to decide whether it is
    /// already the file: stopped by SIGINT, the entry is interrupted (not failed) and the
    /// destination stays as it was.
    @Test func sigintStopsTheHashOfADestination() async throws {
        let www = try TemporaryDirectory(prefix: "www-hash-signal")
        try makeFile(path: www.appending("f.bin"), size: 4096, seed: 5)
        let expected = try await sha256(file: www.appending("f.bin"))
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("out"), withIntermediateDirectories: true)
        let destination = project.file("out/f.bin").path
        try makeSparse(destination)
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/f.bin")), to: out/f.bin, sha256: \(expected) }"])

        try await applyInterrupted(project, doing: "the hash") { $0 == destination }
        let size = try FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int64
        #expect(size == Int64(Self.size), "the destination is left as it was")
    }

    /// An upload whose file changed since it was sent is hashed while it is planned: stopped
    /// by SIGINT, the entry is interrupted, not failed, and nothing is sent.
    @Test func sigintStopsTheHashOfAChangedUpload() async throws {
        let dir = try TemporaryDirectory(prefix: "upload-hash-signal")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let project = try Project()
        try makeFile(path: project.file("app.bin"), size: 4096, seed: 7)
        try "version: 1\ndefaults: { retries: 0, timeout: 60s }\nuploads:\n  - { from: app.bin, to: \"\(server.url("/app.bin"))\", method: put }\n"
            .write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)
        let first = try await project.run(["apply"])
        try #require(first.exitCode == 0, "\(first.stderr)")
        try await server.reset()
        let path = project.file("app.bin").path
        try makeSparse(path)

        try await applyInterrupted(project, doing: "the hash") { $0 == path }
        #expect(try await server.stats()["/app.bin"].bytesReceived == 0, "nothing was sent")
    }

    /// `zip: true` zips the folder into the cache before it goes: stopped by SIGINT, the entry
    /// is interrupted, nothing half-built stays in the cache, and nothing reached the server.
    @Test func sigintStopsTheZipOfAFolderBeforeItsUpload() async throws {
        let dir = try TemporaryDirectory(prefix: "upload-zip-signal")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let project = try Project()
        try FileManager.default.createDirectory(at: project.file("site"), withIntermediateDirectories: true)
        try makeSparse(project.file("site/zeros.bin").path)
        try "version: 1\ndefaults: { retries: 0, timeout: 60s }\nuploads:\n  - { from: site, to: \"\(server.url("/site.zip"))\", method: put, zip: true }\n"
            .write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)

        try await applyInterrupted(project, doing: "the zip") { $0.hasSuffix(".tmp") && $0.contains(".zip.") }
        let cache = project.file(".syncr/cache").path
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "no half-built archive is left: \(left)")
        #expect(try await server.uploads().isEmpty, "nothing was sent")
    }
}
