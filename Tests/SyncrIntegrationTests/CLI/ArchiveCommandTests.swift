import Foundation
import Testing

/// `syncr zip` and `syncr unzip` run as a script would.
@Suite struct ArchiveCommandTests {
    @Test func zipThenUnzipRoundTrips() async throws {
        let dir = try TemporaryDirectory(prefix: "zipcmd")
        let src = try dir.makeDirectory("src")
        try FileManager.default.createDirectory(at: src.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        try makeFile(path: src.appendingPathComponent("a/b/data.bin"), size: 300_000, seed: 66)
        try makeFile(path: src.appendingPathComponent("top.txt"), size: 100, seed: 67)
        let binary = try locateSyncrBinary().path
        let zip = try await runProcess(executable: binary, arguments: ["zip", "--deterministic", "src", "out.zip"], cwd: dir.url)
        #expect(zip.exitCode == 0, "\(zip.stderr)")
        #expect(try await runProcess(executable: "unzip", arguments: ["-tq", "out.zip"], cwd: dir.url).exitCode == 0)
        let again = try await runProcess(executable: binary, arguments: ["zip", "--deterministic", "src", "again.zip"], cwd: dir.url)
        #expect(again.exitCode == 0)
        #expect(try await sha256(file: dir.appending("out.zip")) == (try await sha256(file: dir.appending("again.zip"))),
                "deterministic: the same tree gives the same bytes")

        try FileManager.default.createDirectory(at: dir.appending("dest"), withIntermediateDirectories: true)
        try "old".write(to: dir.appending("dest/stale.txt"), atomically: true, encoding: .utf8)
        let unzip = try await runProcess(executable: binary, arguments: ["unzip", "out.zip", "dest"], cwd: dir.url)
        #expect(unzip.exitCode == 0, "\(unzip.stderr)")
        #expect(try await sha256(file: dir.appending("dest/a/b/data.bin")) == (try await sha256(file: src.appendingPathComponent("a/b/data.bin"))))
        #expect(!FileManager.default.fileExists(atPath: dir.appending("dest/stale.txt").path), "DEST is replaced as a whole")
    }

    @Test func unzipRefusesATraversalAndKeepsTheOldFolder() async throws {
        let dir = try TemporaryDirectory(prefix: "unzipcmd")
        let make = """
            import tarfile, io
            with tarfile.open('evil.tar.gz', 'w:gz') as t:
                data = b'x'
                info = tarfile.TarInfo('../../escape.txt'); info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            """
        #expect(try await runProcess(executable: "python3", arguments: ["-c", make], cwd: dir.url).exitCode == 0)
        try FileManager.default.createDirectory(at: dir.appending("dest"), withIntermediateDirectories: true)
        try "keep".write(to: dir.appending("dest/keep.txt"), atomically: true, encoding: .utf8)
        let binary = try locateSyncrBinary().path
        let r = try await runProcess(executable: binary, arguments: ["unzip", "evil.tar.gz", "dest"], cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("../../escape.txt"))
        #expect(try String(contentsOf: dir.appending("dest/keep.txt"), encoding: .utf8) == "keep")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == ["dest", "evil.tar.gz"], "nothing else appeared: \(names)")
    }

    @Test func usageErrors() async throws {
        let binary = try locateSyncrBinary().path
        let r = try await runProcess(executable: binary, arguments: ["unzip", "only-one"])
        #expect(r.exitCode == 64)
        #expect(r.stderr.contains("needs ARCHIVE and DEST_DIR"))
        let help = try await runProcess(executable: binary, arguments: ["zip", "--help"])
        #expect(help.stdout.hasPrefix("Usage: syncr zip"))
    }
}
