#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// New files and unpacked folders follow the umask; a replaced destination keeps its mode.
@Suite("permissions", .timeLimit(.minutes(5)))
struct PermissionTests {
    private func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0o7777
    }

    @Test(arguments: [0o022, 0o077] as [mode_t])
    func newFilesAndUnpackedTreesFollowTheUmask(umask: mode_t) async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("plain.bin"), size: 50_000, seed: 31)
        let release = try www.makeDirectory("release/open")
        try makeFile(path: release.appendingPathComponent("shared.txt"), size: 1_000, seed: 32)
        try makeFile(path: release.appendingPathComponent("run.sh"), size: 1_000, seed: 33)
        chmod(release.appendingPathComponent("shared.txt").path, 0o666)
        chmod(release.appendingPathComponent("run.sh").path, 0o4777)
        chmod(release.path, 0o777)
        let pack = try await runProcess(executable: "tar", arguments: ["czf", "release.tar.gz", "release"], cwd: www.url)
        try #require(pack.exitCode == 0)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \(nginx.url("/plain.bin")), to: out/plain.bin }",
            "{ url: \(nginx.url("/release.tar.gz")), to: out/release, unzip: true, strip_components: 1 }",
        ])
        let result = try await project.run(["apply"], umask: umask)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(mode(project.file("out/plain.bin").path) == 0o666 & ~umask)
        #expect(mode(project.file("out/release/open").path) == 0o777 & ~umask)
        #expect(mode(project.file("out/release/open/shared.txt").path) == 0o666 & ~umask)
        #expect(mode(project.file("out/release/open/run.sh").path) == 0o777 & ~umask, "no setuid, umask applied")
    }

    /// Under umask 077 a new file would be 0600: the replaced one keeps its 0666.
    @Test func aReplacedDestinationKeepsItsMode() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 50_000, seed: 41)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/a.bin")), to: out/a.bin }"])
        try FileManager.default.createDirectory(at: project.file("out"), withIntermediateDirectories: true)
        try Data("older\n".utf8).write(to: project.file("out/a.bin"))
        chmod(project.file("out/a.bin").path, 0o666)
        let result = try await project.run(["apply"], umask: 0o077)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await sha256(file: project.file("out/a.bin")) == (try await sha256(file: www.appending("a.bin"))))
        #expect(mode(project.file("out/a.bin").path) == 0o666)
    }
}
