#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrCore
import Testing

/// `syncr zip` and `syncr unzip` run as a script would.
@Suite(.timeLimit(.minutes(5))) struct ArchiveCommandTests {
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
        let unzip = try await runProcess(executable: binary, arguments: ["unzip", "--replace", "out.zip", "dest"], cwd: dir.url)
        #expect(unzip.exitCode == 0, "\(unzip.stderr)")
        #expect(try await sha256(file: dir.appending("dest/a/b/data.bin")) == (try await sha256(file: src.appendingPathComponent("a/b/data.bin"))))
        #expect(!FileManager.default.fileExists(atPath: dir.appending("dest/stale.txt").path), "--replace: DEST is replaced as a whole")
        // Unpacked again over its own files: nothing of the folder is lost, so no --replace is needed.
        let again2 = try await runProcess(executable: binary, arguments: ["unzip", "out.zip", "dest"], cwd: dir.url)
        #expect(again2.exitCode == 0, "\(again2.stderr)")
        #expect(zip.stderr.contains("4 entries (2 files, "), "\(zip.stderr)")
        #expect(unzip.stderr.contains("unpacked 4 entries (2 files, "), "\(unzip.stderr)")

        // One of each is counted in the singular.
        let one = try dir.makeDirectory("one")
        try makeFile(path: one.appendingPathComponent("only.txt"), size: 10, seed: 68)
        let single = try await runProcess(executable: binary, arguments: ["zip", "one", "one.zip"], cwd: dir.url)
        #expect(single.stderr.contains(": 1 entry (1 file, "), "\(single.stderr)")
        let back = try await runProcess(executable: binary, arguments: ["unzip", "one.zip", "back"], cwd: dir.url)
        #expect(back.stderr.contains("unpacked 1 entry (1 file, "), "\(back.stderr)")
    }

    /// DEST is replaced as a whole: `.`, a folder above the current one, or the archive's own
    /// folder would be deleted with everything in it. Refused, naming DEST; nothing is touched.
    @Test(arguments: [".", "..", "work/..", "box"])
    func unzipRefusesADestinationThatHoldsTheCurrentFolderOrTheArchive(_ destination: String) async throws {
        let dir = try TemporaryDirectory(prefix: "unzipself")
        let work = try dir.makeDirectory("work")
        try "precious".write(to: work.appendingPathComponent("precious.txt"), atomically: true, encoding: .utf8)
        let box = try dir.makeDirectory("work/box")
        try makeFile(path: box.appendingPathComponent("data.txt"), size: 10, seed: 3)
        let binary = try locateSyncrBinary().path
        #expect(try await runProcess(executable: binary, arguments: ["zip", "box", "../arc.zip"], cwd: work).exitCode == 0)
        try FileManager.default.moveItem(at: dir.appending("arc.zip"), to: box.appendingPathComponent("arc.zip"))
        let before = try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted()
        let r = try await runProcess(executable: binary, arguments: ["unzip", "box/arc.zip", destination], cwd: work)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("\(destination): "), "\(r.stderr)")
        #expect(r.stderr.contains("replaced as a whole"), "\(r.stderr)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted() == before, "nothing touched")
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
        // DEST two folders down, so that two levels up from it (or from a staging folder
        // beside it) is still inside `dir`, where the listings below look.
        try FileManager.default.createDirectory(at: dir.appending("box/dest"), withIntermediateDirectories: true)
        try "keep".write(to: dir.appending("box/dest/keep.txt"), atomically: true, encoding: .utf8)
        let binary = try locateSyncrBinary().path
        let r = try await runProcess(executable: binary, arguments: ["unzip", "evil.tar.gz", "box/dest"], cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("../../escape.txt"))
        #expect(try String(contentsOf: dir.appending("box/dest/keep.txt"), encoding: .utf8) == "keep")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == ["box", "evil.tar.gz"], "nothing else appeared: \(names)")
        let inBox = try FileManager.default.contentsOfDirectory(atPath: dir.appending("box").path)
        #expect(inBox == ["dest"], "nothing else appeared beside DEST: \(inBox)")
        let inDest = try FileManager.default.contentsOfDirectory(atPath: dir.appending("box/dest").path)
        #expect(inDest == ["keep.txt"], "nor in it: \(inDest)")
    }

    /// Ctrl-C while `syncr zip` works: it stops, removes its half-written archive, leaves the
    /// old one as it was and exits 130. (The tree is one 64 GiB sparse file, so the signal lands
    /// mid-way however slow the machine: zeros deflate fast, and 16 GiB was once zipped whole
    /// before a loaded CI run under ThreadSanitizer looked.)
    @Test(.timeLimit(.minutes(5)))
    func anInterruptedZipLeavesNothingHalfWritten() async throws {
        let dir = try TemporaryDirectory(prefix: "zipint")
        let src = try dir.makeDirectory("src")
        let fd = open(src.appendingPathComponent("zeros.bin").path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 64 << 30) == 0)
        close(fd)
        // An earlier archive (an empty one: its end record alone), which the zip may replace.
        let earlier = Data([0x50, 0x4B, 5, 6] + [UInt8](repeating: 0, count: 18))
        try earlier.write(to: dir.appending("out.zip"))
        let run = try BackgroundSyncr(in: dir.url, ["zip", "src", "out.zip"])
        // The sign: the archive under construction appeared beside out.zip. Watched from a thread
        // of its own: in a full run the pool's threads can be held for minutes, and a polling
        // task then first looked after the zip had finished (a CI run under ThreadSanitizer).
        let started = await pollOnItsOwnThread(timeout: .seconds(60)) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return names.contains { $0.hasPrefix(".out.zip.") } || !run.child.isRunning
        }
        try #require(started && run.child.isRunning, "zip should be under way: \(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.finish() == 130, "\(run.stderr)")
        #expect(run.stderr.contains("interrupted: out.zip was not written"), "\(run.stderr)")
        #expect(try Data(contentsOf: dir.appending("out.zip")) == earlier)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".bg-") }.sorted()
        #expect(names == ["out.zip", "src"], "no half-written archive is left: \(names)")
    }

    /// The replace deletes DEST_DIR whole: `syncr unzip a.zip ~` emptied the home folder, and
    /// through a link to a folder, the folder. A DEST_DIR holding what the archive does not is
    /// refused, naming a file it holds, and left as it was, unless `--replace`.
    @Test(arguments: [false, true])
    func unzipRefusesAFolderHoldingWhatTheArchiveDoesNot(throughALink: Bool) async throws {
        let dir = try TemporaryDirectory(prefix: "unzipforeign")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 1000, seed: 70)
        let home = try dir.makeDirectory("home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".ssh"), withIntermediateDirectories: true)
        try "key".write(to: home.appendingPathComponent(".ssh/id_ed25519"), atomically: true, encoding: .utf8)
        try makeFile(path: home.appendingPathComponent("data.bin"), size: 10, seed: 71)
        if throughALink { try FileManager.default.createSymbolicLink(atPath: dir.appending("link").path, withDestinationPath: "home") }
        let destination = throughALink ? "link" : "home"
        let binary = try locateSyncrBinary().path
        #expect(try await runProcess(executable: binary, arguments: ["zip", "src", "a.zip"], cwd: dir.url).exitCode == 0)
        let before = try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted()

        let r = try await runProcess(executable: binary, arguments: ["unzip", "a.zip", destination], cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("syncr: error: \(destination): holds .ssh, which a.zip does not: DEST_DIR is replaced as a whole, "
            + "which would delete it; unpack into a new or empty folder, or give --replace to delete what is there"), "\(r.stderr)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted() == before, "nothing touched, no staging left")

        let replaced = try await runProcess(executable: binary, arguments: ["unzip", "--replace", "a.zip", destination], cwd: dir.url)
        #expect(replaced.exitCode == 0, "\(replaced.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending(destination).path) == ["data.bin"])
    }

    /// Paths named on the command line are taken as the shell gives them: a link to an archive
    /// or to a folder is what it points to ("no such archive file" and "not a folder" were said).
    @Test func linksOnTheCommandLineAreFollowed() async throws {
        let dir = try TemporaryDirectory(prefix: "ziplinks")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 1000, seed: 72)
        try FileManager.default.createSymbolicLink(atPath: dir.appending("srclink").path, withDestinationPath: "src")
        let binary = try locateSyncrBinary().path
        let zip = try await runProcess(executable: binary, arguments: ["zip", "srclink", "a.zip"], cwd: dir.url)
        #expect(zip.exitCode == 0, "\(zip.stderr)")
        try FileManager.default.createSymbolicLink(atPath: dir.appending("link.zip").path, withDestinationPath: "a.zip")
        let unzip = try await runProcess(executable: binary, arguments: ["unzip", "link.zip", "out"], cwd: dir.url)
        #expect(unzip.exitCode == 0, "\(unzip.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("out").path) == ["data.bin"])
        let missing = try await runProcess(executable: binary, arguments: ["zip", "nothing", "b.zip"], cwd: dir.url)
        #expect(missing.stderr == "syncr: error: nothing: no such folder\n", "\(missing.stderr)")
        let folder = try await runProcess(executable: binary, arguments: ["unzip", "src", "out2"], cwd: dir.url)
        #expect(folder.stderr == "syncr: error: src: is a folder, not an archive\n", "\(folder.stderr)")
    }

    /// `syncr zip` writes over an earlier archive or an empty file only: swapped or mistyped
    /// arguments (`syncr zip build notes.txt`) replaced any file with a zip. A folder as the
    /// output is refused before the tree is compressed.
    @Test func zipRefusesToWriteOverWhatIsNotAnArchive() async throws {
        let dir = try TemporaryDirectory(prefix: "zipover")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 1000, seed: 73)
        try "my notes".write(to: dir.appending("notes.txt"), atomically: true, encoding: .utf8)
        _ = try dir.makeDirectory("box")
        FileManager.default.createFile(atPath: dir.appending("empty.zip").path, contents: Data())
        let binary = try locateSyncrBinary().path
        let over = try await runProcess(executable: binary, arguments: ["zip", "src", "notes.txt"], cwd: dir.url)
        #expect(over.exitCode == 1)
        #expect(over.stderr == "syncr: error: notes.txt: exists and is not a zip archive; syncr zip writes over an earlier "
            + "archive only: move the file away or name another (the folder to zip comes first, then the archive)\n", "\(over.stderr)")
        #expect(try String(contentsOf: dir.appending("notes.txt"), encoding: .utf8) == "my notes")
        let box = try await runProcess(executable: binary, arguments: ["zip", "src", "box"], cwd: dir.url)
        #expect(box.stderr == "syncr: error: box: is a folder; give the archive's file name (such as box/archive.zip)\n",
                "\(box.stderr)")
        #expect(try await runProcess(executable: binary, arguments: ["zip", "src", "empty.zip"], cwd: dir.url).exitCode == 0)
        let again = try await runProcess(executable: binary, arguments: ["zip", "src", "empty.zip"], cwd: dir.url)
        #expect(again.exitCode == 0, "an earlier archive is replaced: \(again.stderr)")
    }

    /// A `SOURCE_DATE_EPOCH` that is not a number of seconds was ignored without a word: the
    /// archive took the files' own times and differed from build to build.
    @Test(arguments: ["abc", "1700000000.5", "-5"])
    func zipRefusesABadSourceDateEpoch(_ value: String) async throws {
        let dir = try TemporaryDirectory(prefix: "zipepoch")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 100, seed: 74)
        var environment = ProcessInfo.processInfo.environment
        environment["SOURCE_DATE_EPOCH"] = value
        let r = try await runProcess(executable: try locateSyncrBinary().path, arguments: ["zip", "src", "a.zip"],
                                     environment: environment, cwd: dir.url)
        #expect(r.exitCode == 1)
        #expect(r.stderr == "syncr: error: SOURCE_DATE_EPOCH is '\(value)', not a whole number of seconds since 1970-01-01 UTC; "
            + "set it to one (such as the last commit's time: git log -1 --format=%ct) or unset it\n", "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appending("a.zip").path))
    }

    /// An empty `SOURCE_DATE_EPOCH` is unset, as CI configurations that export it empty mean.
    @Test func anEmptySourceDateEpochIsUnset() async throws {
        let dir = try TemporaryDirectory(prefix: "zipepoch")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 100, seed: 75)
        let r = try await runProcess(executable: try locateSyncrBinary().path, arguments: ["zip", "src", "a.zip"],
                                     environment: ["SOURCE_DATE_EPOCH": ""], cwd: dir.url)
        #expect(r.exitCode == 0, "\(r.stderr)")
    }

    /// An unzip whose task is cancelled stops at its first piece of data, removes its staging
    /// folder and leaves the destination as it was.
    @Test func aCancelledUnzipLeavesTheOldFolder() async throws {
        let dir = try TemporaryDirectory(prefix: "unzipint")
        let src = try dir.makeDirectory("src")
        try makeFile(path: src.appendingPathComponent("data.bin"), size: 100_000, seed: 68)
        let binary = try locateSyncrBinary().path
        #expect(try await runProcess(executable: binary, arguments: ["zip", "src", "in.zip"], cwd: dir.url).exitCode == 0)
        try FileManager.default.createDirectory(at: dir.appending("dest"), withIntermediateDirectories: true)
        try "keep".write(to: dir.appending("dest/keep.txt"), atomically: true, encoding: .utf8)
        let archive = dir.appending("in.zip").path, destination = dir.appending("dest").path
        let outcome = await Task { () -> String in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try ArchiveCommands.unzip(archive: archive, destination: destination)
                return "unpacked"
            } catch {
                return "\(error)"
            }
        }.value
        #expect(outcome == "interrupted: \(destination) was left as it was")
        #expect(try String(contentsOf: dir.appending("dest/keep.txt"), encoding: .utf8) == "keep")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == ["dest", "in.zip", "src"], "no staging folder is left: \(names)")
    }

    /// A library caller's negative numbers are refused as the command line's are, before
    /// anything is touched (a negative strip was taken as 0; a negative limit refused every
    /// entry as "more than the -1 bytes").
    @Test func negativeNumbersFromALibraryCallerAreRefused() throws {
        let dir = try TemporaryDirectory(prefix: "unzipneg")
        try Data("PK".utf8).write(to: dir.appending("in.zip"))
        let archive = dir.appending("in.zip").path, destination = dir.appending("dest").path
        #expect(throws: ArchiveCommands.Failure.self) {
            _ = try ArchiveCommands.unzip(archive: archive, destination: destination, stripComponents: -1)
        }
        for (strip, limit, message) in [(-1, nil, "--strip-components -1: expected 0 or more"),
                                         (0, Int64(-1), "--max-unpacked-size -1: expected a size above 0")] {
            do {
                _ = try ArchiveCommands.unzip(archive: archive, destination: destination, stripComponents: strip,
                                              maxUnpackedSize: limit)
                Issue.record("unpacked")
            } catch {
                #expect(error.description == message)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// `--strip-components` that makes two entries one: the message named one entry and said
    /// the archive held it twice, and every message about stripping named the manifest's
    /// `strip_components`. They name both entries, the name they share, and the flag typed.
    @Test func stripMessagesNameBothEntriesAndTheFlag() async throws {
        let dir = try TemporaryDirectory(prefix: "unzipstrip")
        let binary = try locateSyncrBinary().path
        for (path, seed) in [("two/v1/x.txt", 1), ("two/v2/x.txt", 2), ("mixed/NOTES.txt", 3), ("mixed/top/a.txt", 4)] {
            try FileManager.default.createDirectory(at: dir.appending(path).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try makeFile(path: dir.appending(path), size: 10, seed: UInt64(seed))
        }
        for name in ["two", "mixed"] {
            #expect(try await runProcess(executable: binary, arguments: ["zip", name, name + ".zip"], cwd: dir.url).exitCode == 0)
        }

        let clash = try await runProcess(executable: binary, arguments: ["unzip", "--strip-components", "1", "two.zip", "out"],
                                         cwd: dir.url)
        #expect(clash.exitCode == 1)
        #expect(clash.stderr == "syncr: error: two.zip: v1/x.txt and v2/x.txt both unpack to x.txt once --strip-components "
            + "has removed their leading folders; lower --strip-components (unpacking the archive once without it shows the layout)\n")

        let nothing = try await runProcess(executable: binary, arguments: ["unzip", "--strip-components", "2", "two.zip", "out"],
                                           cwd: dir.url)
        #expect(nothing.exitCode == 1)
        #expect(nothing.stderr.contains("two.zip: --strip-components 2 leaves nothing of any entry's path"), "\(nothing.stderr)")
        #expect(nothing.stderr.contains("lower --strip-components ("), "\(nothing.stderr)")

        let note = try await runProcess(executable: binary, arguments: ["unzip", "--quiet", "--strip-components", "1", "mixed.zip", "out"],
                                        cwd: dir.url)
        #expect(note.exitCode == 0, "\(note.stderr)")
        #expect(note.stderr == "syncr: note: --strip-components 1 left out 1 file with no more path than that: NOTES.txt\n")
        for r in [clash, nothing, note] {
            #expect(!r.stderr.contains("strip_components"), "the manifest's key is not what was typed: \(r.stderr)")
        }
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
