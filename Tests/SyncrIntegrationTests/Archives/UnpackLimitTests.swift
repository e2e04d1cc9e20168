#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Archives that compress extremely well are not zip bombs: 64 MiB of zeros (about 1030:1)
/// unpacks through `syncr unzip` and an `unzip: true` download. What is refused is a total over
/// `max_unpacked_size:` / `--max-unpacked-size` or over the destination's free space, with an
/// error that names the limit and how to raise it.
enum ZerosArchives {
    static let size = 64 << 20

    /// Writes `zeros.zip` (Python's zipfile with force_zip64) and `zeros.tar.gz`, each holding
    /// `zeros.img`, into `folder`.
    static func make(in folder: URL) async throws {
        let script = """
            import io, tarfile, zipfile
            with zipfile.ZipFile("zeros.zip", "w", zipfile.ZIP_DEFLATED) as z:
                with z.open("zeros.img", "w", force_zip64=True) as f:
                    for _ in range(64):
                        f.write(bytes(1 << 20))
            with tarfile.open("zeros.tar.gz", "w:gz") as t:
                info = tarfile.TarInfo("zeros.img"); info.size = 64 << 20
                t.addfile(info, io.BytesIO(bytes(info.size)))
            """
        let r = try await runProcess(executable: "python3", arguments: ["-c", script], cwd: folder)
        try #require(r.exitCode == 0, "\(r.stderr)")
    }

    static func fileSize(_ path: String) -> Int? {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : nil
    }
}

@Suite("unpacked size limits", .timeLimit(.minutes(5)))
struct UnpackLimitTests {
    @Test(arguments: ["zeros.zip", "zeros.tar.gz"])
    func syncrUnzipUnpacks64MiBOfZeros(archive: String) async throws {
        let dir = try TemporaryDirectory(prefix: "zeros")
        try await ZerosArchives.make(in: dir.url)
        let r = try await runProcess(executable: try locateSyncrBinary().path, arguments: ["unzip", archive, "dest"], cwd: dir.url)
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(ZerosArchives.fileSize(dir.appending("dest/zeros.img").path) == ZerosArchives.size)
    }

    @Test func syncrUnzipRefusesATotalOverMaxUnpackedSize() async throws {
        let dir = try TemporaryDirectory(prefix: "zeros")
        try await ZerosArchives.make(in: dir.url)
        try FileManager.default.createDirectory(at: dir.appending("dest"), withIntermediateDirectories: true)
        try "old".write(to: dir.appending("dest/keep.txt"), atomically: true, encoding: .utf8)
        let binary = try locateSyncrBinary().path
        let r = try await runProcess(executable: binary, arguments: ["unzip", "--max-unpacked-size", "1MiB", "zeros.zip", "dest"],
                                     cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr == "syncr: error: zeros.zip: stopped: the archive unpacks to 67108864 bytes (64.0 MiB), more than "
            + "the 1048576 bytes (1.0 MiB) that --max-unpacked-size allows; raise --max-unpacked-size to unpack it\n")
        #expect(try String(contentsOf: dir.appending("dest/keep.txt"), encoding: .utf8) == "old")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == ["dest", "zeros.tar.gz", "zeros.zip"], "no staging folder left: \(names)")

        let raised = try await runProcess(executable: binary, arguments: ["unzip", "--max-unpacked-size", "64MiB", "--replace", "zeros.zip", "dest"],
                                          cwd: dir.url)
        #expect(raised.exitCode == 0, "exactly the limit fits: \(raised.stderr)")

        let bad = try await runProcess(executable: binary, arguments: ["unzip", "--max-unpacked-size", "lots", "zeros.zip", "dest"],
                                       cwd: dir.url)
        #expect(bad.exitCode == 64)
        #expect(bad.stderr.contains("'--max-unpacked-size' takes a size like 512MiB or 2GiB, not 'lots'."), "\(bad.stderr)")
    }

    /// The download entry unpacks the zeros; with `max_unpacked_size:` below the total it is
    /// refused, the old folder stays, and raising the limit unpacks from the cache without a
    /// second download.
    @Test func unzipDownloadOf64MiBOfZerosAndItsMaxUnpackedSize() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try await ZerosArchives.make(in: www.url)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }

        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/zeros.zip")), to: out/zeros, unzip: true }"])
        let plain = try await project.run(["apply"])
        #expect(plain.exitCode == 0, "\(plain.stderr)")
        #expect(ZerosArchives.fileSize(project.file("out/zeros/zeros.img").path) == ZerosArchives.size)

        let limited = try Project()
        try FileManager.default.createDirectory(at: limited.file("out/zeros"), withIntermediateDirectories: true)
        try "old".write(to: limited.file("out/zeros/keep.txt"), atomically: true, encoding: .utf8)
        try limited.writeManifest(downloads: ["{ url: \(nginx.url("/zeros.tar.gz")), to: out/zeros, unzip: true, max_unpacked_size: 1MiB }"])
        let refused = try await limited.run(["apply"])
        #expect(refused.exitCode == 1)
        #expect(refused.stderr.contains("zeros.tar.gz: zeros.img: stopped: the archive unpacks to at least 67108864 bytes (64.0 MiB), more than "
            + "the 1048576 bytes (1.0 MiB) that max_unpacked_size allows; raise max_unpacked_size: on the entry for out/zeros to unpack it"),
                "\(refused.stderr)")
        #expect(try String(contentsOf: limited.file("out/zeros/keep.txt"), encoding: .utf8) == "old")

        let gets = try nginx.accessLog().filter { $0.method == "GET" && $0.path == "/zeros.tar.gz" }.count
        try limited.writeManifest(downloads: ["{ url: \(nginx.url("/zeros.tar.gz")), to: out/zeros, unzip: true, max_unpacked_size: 2GiB }"])
        // The folder was made by hand, and holds a file the archive does not: it is not
        // replaced until that file is moved away (the swap would delete it).
        let kept = try await limited.run(["apply"])
        #expect(kept.exitCode == 1 && kept.stderr.contains("a folder syncr did not unpack is there, holding keep.txt"),
                "\(kept.stderr)")
        try FileManager.default.removeItem(at: limited.file("out/zeros/keep.txt"))
        let raised = try await limited.run(["apply"])
        #expect(raised.exitCode == 0, "\(raised.stderr)")
        #expect(ZerosArchives.fileSize(limited.file("out/zeros/zeros.img").path) == ZerosArchives.size)
        #expect(try nginx.accessLog().filter { $0.method == "GET" && $0.path == "/zeros.tar.gz" }.count == gets,
                "unpacked again from the cache")
    }
}

/// The free space of the destination's file system, on a small tmpfs: an archive that would
/// not fit is refused before anything is written, naming the space and what to do.
@Suite("unpacked size over the free space", .serialized, .timeLimit(.minutes(5)),
       .enabled(if: Tmpfs.canRun, "mounting a tmpfs needs root (CI runs the tests as root)"))
struct UnpackFreeSpaceTests {
    @Test(arguments: ["zeros.zip", "zeros.tar.gz"])
    func anArchiveLargerThanTheFreeSpaceIsRefused(archive: String) async throws {
        let dir = try TemporaryDirectory(prefix: "zeros")
        try await ZerosArchives.make(in: dir.url)
        let disk = try Tmpfs(megabytes: 16)
        let r = try await runProcess(executable: try locateSyncrBinary().path,
                                     arguments: ["unzip", dir.appending(archive).path, disk.at("dest")], cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("stopped: the archive unpacks to "), "\(r.stderr)")
        #expect(r.stderr.contains("67108864 bytes (64.0 MiB), more than the "), "\(r.stderr)")
        #expect(r.stderr.hasSuffix(" free on the file system of \(disk.path); make room there and run again\n"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [], "nothing left on the small disk")
    }
}
