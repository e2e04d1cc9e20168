#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SyncrCore
import SyncrManifest
import Testing

/// `syncr cache` lists a cache folder's entries; `syncr cache prune` removes the ones no
/// manifest entry uses, or that are older than `--older-than`, and nothing else.
///
/// Entries are written with the library's own record writers (`Cache.saveState`,
/// `saveUploadRecord`), so they are byte for byte what a run leaves behind.
@Suite(.timeLimit(.minutes(5)))
struct CacheTests {
    static let manifest = """
    version: 1
    cache: cache
    downloads:
      - url: http://127.0.0.1:9/partial.bin
        to: out/partial.bin
      - url: http://127.0.0.1:9/done.bin
        to: out/done.bin
    uploads:
      - from: report.txt
        to: http://127.0.0.1:9/upload
    """

    /// A harness with the manifest, and a cache holding: a partial download (half of 4 KiB) and a
    /// recorded one that the manifest uses, its upload's record, an orphan download complete in
    /// the cache, a lock file and a file of someone else's.
    struct Fixture {
        let harness: CLIHarness
        let cache: Cache
        let partial = Cache.key(for: "http://127.0.0.1:9/partial.bin")
        let done = Cache.key(for: "http://127.0.0.1:9/done.bin")
        let orphan = Cache.key(for: "http://127.0.0.1:9/gone.bin")
        let upload: String

        init() throws {
            harness = try CLIHarness()
            let manifestPath = try harness.write("syncr.yml", CacheTests.manifest)
            try harness.write("report.txt", "report\n")
            cache = Cache(directory: harness.folder + "/cache")
            try cache.prepare()

            var state = EntryState(url: "http://127.0.0.1:9/partial.bin")
            state.size = 4096
            state.good = 2048
            try cache.saveState(state, key: partial)
            try Data(repeating: 7, count: 2048).write(to: URL(fileURLWithPath: cache.dataPath(partial)))

            var recorded = EntryState(url: "http://127.0.0.1:9/done.bin")
            recorded.size = 10
            recorded.good = 10
            recorded.complete = true
            try cache.saveState(recorded, key: done)

            var gone = EntryState(url: "http://127.0.0.1:9/gone.bin")
            gone.size = 3000
            gone.good = 3000
            gone.complete = true
            try cache.saveState(gone, key: orphan)
            try Data(repeating: 1, count: 3000).write(to: URL(fileURLWithPath: cache.dataPath(orphan)))

            let manifest = try ManifestLoader.load(path: manifestPath, environment: [:])
            upload = Cache.uploadKey(manifest.uploads[0])
            let fingerprint = FileFingerprint(device: 1, inode: 2, size: 7, mtimeNanoseconds: 3)
            try cache.saveUploadRecord(UploadRecord(method: "post", url: "http://127.0.0.1:9/upload", from: "report.txt",
                                                    files: ["report.txt": .init(size: 7, sha256: String(repeating: "0", count: 64),
                                                                                fingerprint: fingerprint)]),
                                       key: upload)
            try harness.write("cache/.lock", "")
            try harness.write("cache/\(orphan).lock", "")
            try harness.write("cache/NOTES.txt", "not syncr's\n")
        }

        func files() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: cache.directory))
        }

        /// Sets the modification time of every file of the entry `key` to `seconds` ago, and the
        /// time its journal line (a complete download's record) says it was written.
        func age(_ key: String, by seconds: Int) throws {
            let when = Date(timeIntervalSinceNow: -Double(seconds))
            if cache.journal.record(key) != nil, let state = cache.loadState(key) {
                _ = try cache.save(state, key: key, durable: false, stateFile: false,
                                   updated: Int64(when.timeIntervalSince1970))
            }
            for name in try files() where name.hasPrefix(key) && !name.hasSuffix(".lock") {
                try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: cache.directory + "/" + name)
            }
        }
    }

    @Test func listShowsEveryEntry() async throws {
        let f = try Fixture()
        let r = try await f.harness.run(["cache"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("KEY") == true)
        func line(_ key: String) -> String { lines.first { $0.hasPrefix(key) } ?? "" }
        #expect(line(f.partial).contains("download"))
        #expect(line(f.partial).contains("partial 50%"))
        #expect(line(f.partial).contains("http://127.0.0.1:9/partial.bin"))
        #expect(line(f.done).contains("recorded"))
        #expect(line(f.orphan).contains("complete"))
        #expect(line(f.orphan).contains("http://127.0.0.1:9/gone.bin"))
        #expect(line(f.upload).contains("sent 1 file"))
        #expect(line(f.upload).contains("report.txt -> http://127.0.0.1:9/upload"))
        #expect(lines.last?.contains(": 4 entries (1 partial), ") == true, "\(lines.last ?? "")")
        #expect(!r.stdout.contains("NOTES.txt") && !r.stdout.contains(".lock"))
        #expect(r.stderr.isEmpty)

        // --cache names the folder without reading a manifest.
        try FileManager.default.removeItem(atPath: f.harness.folder + "/syncr.yml")
        let direct = try await f.harness.run(["cache", "--cache", "cache"])
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(direct.stdout.contains("Cache cache: 4 entries"))
    }

    @Test func listMasksCredentialsAndTokens() async throws {
        let f = try Fixture()
        let url = "https://robot:hunter22secret@example.com/x.bin?token=sekrit123&v=2&X-Amz-Signature=abcdef0123"
        try f.cache.saveState(EntryState(url: url), key: Cache.key(for: "secret"))
        let r = try await f.harness.run(["cache"])
        #expect(r.status == 0)
        for secret in ["hunter22secret", "sekrit123", "abcdef0123"] {
            #expect(!r.allOutput.contains(secret))
        }
        #expect(r.stdout.contains("https://robot:***@example.com/x.bin?token=***&v=2&X-Amz-Signature=***"))
    }

    /// A cleanup job rarely has the download job's secrets: listing and pruning send no
    /// request, so a header's unset variable does not stop them; plan, which sends, still says.
    @Test func aHeadersUnsetVariableStopsNeitherListNorPrune() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - url: http://127.0.0.1:9/a.bin
                to: a.bin
                headers: { Authorization: "Bearer ${SYNCR_TEST_UNSET_TOKEN}" }
            """)
        let list = try await harness.run(["cache"])
        #expect(list.status == 0, "\(list.stderr)")
        let prune = try await harness.run(["cache", "prune", "--dry-run"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let plan = try await harness.run(["plan"])
        #expect(plan.status == 65)
        #expect(plan.stderr.contains("SYNCR_TEST_UNSET_TOKEN is not set"), "\(plan.stderr)")
    }

    @Test func listOfAMissingCacheIsEmpty() async throws {
        let harness = try CLIHarness()
        let r = try await harness.run(["cache", "--cache", "nothing-here"])
        #expect(r.status == 0)
        #expect(r.stdout == "Cache nothing-here: empty.\n")
        // A mistyped folder is not taken for the cache without a word.
        #expect(r.stderr.contains("there is no cache folder at nothing-here"), "\(r.stderr)")
        let prune = try await harness.run(["cache", "prune", "--cache", "nothing-here", "--older-than", "1d"])
        #expect(prune.status == 0 && prune.stderr.contains("there is no cache folder at nothing-here"), "\(prune.stderr)")
    }

    @Test func pruneRemovesWhatTheManifestDoesNotUse() async throws {
        let f = try Fixture()
        let before = try f.files()

        let dry = try await f.harness.run(["cache", "prune", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would remove \(f.orphan) complete"))
        #expect(dry.stdout.contains("not used by syncr.yml"))
        #expect(dry.stdout.contains("would remove 1 cache entry"))
        #expect(try f.files() == before, "--dry-run removes nothing")

        let r = try await f.harness.run(["cache", "prune"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("removed \(f.orphan)"))
        #expect(r.stdout.contains("removed 1 cache entry"))
        #expect(r.stdout.contains("3 kept"))
        let after = try f.files()
        // Prune takes the cache lock, like apply: its lock file is the only thing it adds.
        #expect(after.subtracting(["syncr.lock"]) == before.subtracting(["\(f.orphan).state", "\(f.orphan).data"]),
                "only the orphan's data and record go; locks, other files and used entries stay")
        #expect(after.contains(".lock") && after.contains("\(f.orphan).lock") && after.contains("NOTES.txt"))

        // Nothing left to prune: a second run changes nothing.
        let again = try await f.harness.run(["cache", "prune", "--quiet"])
        #expect(again.status == 0)
        #expect(again.stdout.hasPrefix("syncr: removed 0 cache entries"), "\(again.stdout)")
        #expect(try f.files() == after)
    }

    @Test func pruneByAgeAlone() async throws {
        let f = try Fixture()
        try f.age(f.partial, by: 3 * 86_400)
        try f.age(f.orphan, by: 3 * 86_400)
        let before = try f.files()
        let r = try await f.harness.run(["cache", "prune", "--cache", "cache", "--older-than", "2d"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("unchanged for 3d"))
        #expect(r.stdout.contains("removed 2 cache entries"))
        let removed = before.subtracting(try f.files())
        // The orphan is complete: its record is a line of the journal, which says it is gone.
        #expect(removed == ["\(f.partial).state", "\(f.partial).data", "\(f.orphan).data"])
        let reread = Cache(directory: f.cache.directory)
        #expect(reread.loadState(f.orphan) == nil && reread.loadState(f.partial) == nil)
        #expect(reread.loadState(f.done) != nil)
    }

    /// `--older-than 0` needs no unit (zero is zero in any), and means what `0s` does.
    @Test func olderThanZeroNeedsNoUnit() async throws {
        let f = try Fixture()
        let bare = try await f.harness.run(["cache", "prune", "--dry-run", "--older-than", "0"])
        #expect(bare.status == 0, "\(bare.stderr)")
        #expect(bare.stdout.contains("would remove 1 cache entry"), "the orphan: \(bare.stdout)")
        let unit = try await f.harness.run(["cache", "prune", "--dry-run", "--older-than", "0s"])
        // Each line names the entry's age, which may have grown by a second between the runs.
        #expect(bare.stdout.split(separator: "\n").last == unit.stdout.split(separator: "\n").last, "\(unit.stdout)")
        #expect(unit.status == 0 && bare.stderr == unit.stderr)
    }

    /// Without a manifest, age alone cannot tell an up-to-date file's record (which never changes)
    /// from a forgotten one: a record whose destination is still as recorded stays.
    @Test func pruneByAgeKeepsRecordsOfFilesInPlace() async throws {
        let f = try Fixture()
        let destination = try f.harness.write("installed.bin", "installed\n")
        let key = Cache.key(for: "http://127.0.0.1:9/installed.bin")
        var state = EntryState(url: "http://127.0.0.1:9/installed.bin")
        state.size = 10
        state.good = 10
        state.complete = true
        state.destination = destination
        let fingerprint: FileFingerprint = try #require(FS.fingerprint(destination))
        state.destinationFingerprint = fingerprint
        try f.cache.saveState(state, key: key)
        try f.age(key, by: 30 * 86_400)
        try f.age(f.done, by: 30 * 86_400)  // recorded, but says nothing about where its file is

        let r = try await f.harness.run(["cache", "prune", "--cache", "cache", "--older-than", "7d"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains(key), "the record of a file in place stays")
        #expect(r.stdout.contains("removed \(f.done)"))
        #expect(Cache(directory: f.cache.directory).loadState(key) != nil)

        // Once the file changed by hand, the record vouches for nothing and goes.
        try f.harness.write("installed.bin", "edited by hand\n")
        let again = try await f.harness.run(["cache", "prune", "--cache", "cache", "--older-than", "7d"])
        #expect(again.stdout.contains("removed \(key)"))
        #expect(Cache(directory: f.cache.directory).loadState(key) == nil)
    }

    /// The same for an unpacked folder, which is recorded by its shape (`destinationTree`),
    /// not by a file's fingerprint: pruned, the next run downloaded the archive again.
    @Test func pruneByAgeKeepsRecordsOfUnpackedFoldersInPlace() async throws {
        let f = try Fixture()
        let folder = f.harness.folder + "/unpacked"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try f.harness.write("unpacked/a.txt", "a\n")
        let key = Cache.key(for: "http://127.0.0.1:9/unpacked.tar.gz")
        var state = EntryState(url: "http://127.0.0.1:9/unpacked.tar.gz")
        state.size = 10
        state.good = 10
        state.complete = true
        state.destination = folder
        let tree = try #require(FolderReplace.fingerprint(folder))
        state.destinationTree = tree
        try f.cache.saveState(state, key: key)
        try f.age(key, by: 30 * 86_400)

        let r = try await f.harness.run(["cache", "prune", "--cache", "cache", "--older-than", "7d"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains(key), "the record of a folder in place stays: \(r.stdout)")
        #expect(Cache(directory: f.cache.directory).loadState(key) != nil)

        _ = try f.harness.write("unpacked/b.txt", "added by hand\n")
        let again = try await f.harness.run(["cache", "prune", "--cache", "cache", "--older-than", "7d"])
        #expect(again.stdout.contains("removed \(key)"), "\(again.stdout)")
    }

    /// With a manifest and an age, an entry goes only when both say so.
    @Test func pruneByManifestAndAge() async throws {
        let f = try Fixture()
        let staleOrphan = Cache.key(for: "http://127.0.0.1:9/stale.bin")
        try f.cache.saveState(EntryState(url: "http://127.0.0.1:9/stale.bin"), key: staleOrphan)
        try f.age(staleOrphan, by: 10 * 86_400)
        try f.age(f.partial, by: 10 * 86_400)  // old, but the manifest uses it
        let r = try await f.harness.run(["cache", "prune", "--older-than", "1d12h", "syncr.yml"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("removed \(staleOrphan)"))
        #expect(r.stdout.contains("not used by syncr.yml, unchanged for 10d"))
        #expect(r.stdout.contains("removed 1 cache entry"))
        let files = try f.files()
        #expect(!files.contains("\(staleOrphan).state"))
        #expect(files.contains("\(f.orphan).data"), "a recent orphan stays")
        #expect(files.contains("\(f.partial).data"), "an entry the manifest uses stays")
    }

    /// Entries are named by the URL after expansion, so prune needs the variables apply had.
    @Test func pruneNeedsTheManifestsVariables() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
        version: 1
        downloads:
          - url: http://127.0.0.1:9/${CHANNEL}/a.bin
            to: a.bin
        """)
        let cache = Cache(directory: harness.folder + "/.syncr/cache")
        try cache.prepare()
        let key = Cache.key(for: "http://127.0.0.1:9/stable/a.bin")
        try cache.saveState(EntryState(url: "http://127.0.0.1:9/${CHANNEL}/a.bin"), key: key)

        let unset = try await harness.run(["cache", "prune"])
        #expect(unset.status == 65, "an unset variable stops prune before it removes anything")
        #expect(unset.stderr.contains("CHANNEL"))
        #expect(FileManager.default.fileExists(atPath: cache.statePath(key)))

        let r = try await harness.run(["cache", "prune"], environment: ["CHANNEL": "stable"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("removed 0 cache entries"))
        #expect(FileManager.default.fileExists(atPath: cache.statePath(key)))
        #expect(!r.allOutput.contains("stable"), "the expanded URL is not shown")
    }

    @Test(arguments: [
        (["cache", "prune", "--cache", "cache"], "needs a MANIFEST"),
        (["cache", "--dry-run"], "'--dry-run' applies to 'cache prune' only"),
        (["cache", "--older-than", "2d"], "'--older-than' applies to 'cache prune' only"),
        (["cache", "prune", "--older-than", "soon"], "'--older-than' takes a duration"),
        (["cache", "prune", "--older-than", "7"], "'--older-than' takes a duration such as 7d, 36h, 1d12h or 90m, not '7'."),
        (["cache", "prune", "a.yml", "b.yml"], "Unexpected argument 'b.yml'"),
        (["plan", "--dry-run"], "'--dry-run' does not apply to 'plan'"),
    ])
    func usageErrors(arguments: [String], message: String) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func anInvalidManifestIsReported() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ncahce: x\n")
        let r = try await harness.run(["cache"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("syncr.yml:2:1"))
    }

    @Test(arguments: [
        ("https://h/x?token=abc&v=1", "https://h/x?token=***&v=1"),
        ("https://h/x?access_token=abc#part", "https://h/x?access_token=***#part"),
        ("https://h/x?sig=${SIG}&flag", "https://h/x?sig=${SIG}&flag"),
        ("https://u:pw12@h/x?api_key=k1", "https://u:***@h/x?api_key=***"),
        ("https://h/releases/v1.2/tool.tar.gz", "https://h/releases/v1.2/tool.tar.gz"),
    ])
    func maskURL(url: String, shown: String) {
        #expect(CacheInventory.maskURL(url) == shown)
    }

    @Test(arguments: [("7d", 604_800), ("36h", 129_600), ("1d12h", 129_600), ("90m", 5_400), ("45s", 45), ("0", 0), ("0s", 0),
                      ("0d", 0), ("1.5d", 129_600), ("0.5d12h", 86_400), ("1.5h", 5_400)] as [(String, Int64)])
    func ageText(text: String, seconds: Int64) {
        #expect(AgeText.seconds(text) == seconds)
    }

    @Test(arguments: ["", "7", "d", "7x", "-1d", "1h1d", "00", "-0", "0.0", ".5d", "1.d", "1..5d", "1.5.1d", "-0.5d", "1e3d",
                      "inf d", "nand"])
    func ageTextRefuses(text: String) {
        #expect(AgeText.seconds(text) == nil)
    }
}
