#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrLock

/// What goes wrong at the end of `apply` without failing an entry is reported, not dropped.
@Suite(.timeLimit(.minutes(5)))
struct RunWarningTests {
    static let file = Resource(bytes: Resource.pattern(1000))

    @Test func aHealthyRunHasNoWarnings() async throws {
        let project = try ScriptedProject()
        // With flushes on (the scripted project turns them off), so the real ones run.
        let session = Session(manifest: project.manifest([project.download("f.bin")]), options: RunOptions(fsync: true),
                              transport: ScriptedTransport(serving: Self.file))
        defer { session.close() }
        let report = await session.apply()
        #expect(report.results.map(\.status) == [.ok])
        #expect(report.warnings.isEmpty)
    }

    /// A disk that fails the folder's flush (EIO): the entry is in place and stays `ok`, and
    /// the report says which folder, and what that means.
    @Test func aFolderThatCannotBeFlushedIsAWarningNotAFailure() async throws {
        let project = try ScriptedProject()
        let asked = Locked<[String]>([])
        // The scripted project turns flushes off, for speed: this run has them on.
        var options = RunOptions(fsync: true)
        options.folderFlush = { folder in
            asked.withLock { $0.append(folder) }
            return FileError(path: folder, operation: "flush the folder", errno: EIO)
        }
        let session = Session(manifest: project.manifest([project.download("f.bin")]), options: options,
                              transport: ScriptedTransport(serving: Self.file))
        defer { session.close() }
        let report = await session.apply()
        #expect(report.results.map(\.status) == [.ok])
        #expect(project.difference("f.bin", from: Self.file.bytes) == nil)
        #expect(asked.withLock { $0 } == [project.root], "the destination folder, once")
        let warning = try #require(report.warnings.first)
        #expect(report.warnings.count == 1)
        #expect(warning == .folderNotFlushed(FileError(path: project.root, operation: "flush the folder", errno: EIO)))
        #expect(warning.code == "folder_not_flushed")
        #expect(warning.description.hasPrefix("\(project.root): cannot flush the folder: Input/output error; "),
                "\(warning)")
        #expect(warning.description.contains("power cut"))
    }

    /// Records that wait in memory and cannot be written at the end of the run (here the
    /// journal was removed and a folder took its name): every entry is in place and `ok`, and
    /// the report says the records are missing, and what that costs.
    @Test func recordsThatCannotBeWrittenAreAWarningNotAFailure() async throws {
        let project = try ScriptedProject()
        let names = ["a.bin", "b.bin", "c.bin"]
        let journal = project.root + "/.cache/" + RecordJournal.fileName
        // Once the last file is in place (a.bin's record opened the journal, b.bin's and
        // c.bin's wait in memory), the journal goes and a folder takes its name.
        let placed = Locked(0)
        let reporter = ProgressHandler { event in
            guard case .finished = event, placed.withLock({ $0 += 1; return $0 }) == names.count else { return }
            unlink(journal)
            mkdir(journal, 0o755)
        }
        var manifest = project.manifest(names.enumerated().map { project.download($1, index: $0) })
        manifest.defaults.jobs = 1
        manifest.downloads = manifest.downloads.map { var d = $0; d.settings.jobs = 1; return d }
        let session = Session(manifest: manifest, reporter: reporter, transport: ScriptedTransport(serving: Self.file))
        defer { session.close() }
        session.cache.journal.holdLines(for: .seconds(3600))
        let report = await session.apply()
        #expect(report.results.map(\.status) == [.ok, .ok, .ok])
        for name in names { #expect(project.difference(name, from: Self.file.bytes) == nil) }
        let warning = try #require(report.warnings.first)
        #expect(report.warnings.count == 1)
        #expect(warning == .recordsNotFlushed(FileError(path: journal, operation: "open", errno: EISDIR)))
        #expect(warning.code == "records_not_flushed")
        #expect(warning.description.hasPrefix("\(journal): cannot open: Is a directory; the files are in place"),
                "\(warning)")
        #expect(warning.description.contains("download some of them again"))
    }

    @Test func withoutFlushesNoFolderIsFlushed() async throws {
        let project = try ScriptedProject()
        var options = RunOptions(fsync: false)
        options.folderFlush = { folder in
            Issue.record("flushed \(folder) with fsync off")
            return nil
        }
        let session = Session(manifest: project.manifest([project.download("f.bin")]), options: options,
                              transport: ScriptedTransport(serving: Self.file))
        defer { session.close() }
        let report = await session.apply()
        #expect(report.results.map(\.status) == [.ok])
        #expect(report.warnings.isEmpty)
    }

    /// The real flush: a folder removed since files went into it has nothing left to flush.
    @Test func aFolderRemovedBeforeItsFlushIsNoWarning() async throws {
        let folders = ChangedFolders(flushes: true)
        let gone = FileManager.default.temporaryDirectory.appendingPathComponent("syncr-gone-\(UUID().uuidString)").path
        folders.add(gone)
        folders.add(FileManager.default.temporaryDirectory.path)
        #expect(await folders.syncAll().isEmpty)
    }

    @Test func eachChangedFolderIsFlushedOnceAndEveryFailureKept() async throws {
        let asked = Locked<[String]>([])
        let folders = ChangedFolders(flushes: true) { folder in
            asked.withLock { $0.append(folder) }
            return folder == "/b" ? FileError(path: folder, operation: "flush the folder", errno: EIO) : nil
        }
        for folder in ["/b", "/a", "/b", "/c", "/a"] { folders.add(folder) }
        #expect(await folders.syncAll() == [FileError(path: "/b", operation: "flush the folder", errno: EIO)])
        #expect(asked.withLock { $0 } == ["/a", "/b", "/c"], "once each, in order")
        #expect(await folders.syncAll().isEmpty, "nothing changed since")
        #expect(asked.withLock { $0 }.count == 3)
    }
}
