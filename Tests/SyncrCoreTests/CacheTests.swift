import Foundation
import SyncrTestSupport
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// A fresh folder per test, removed at the end (tests run in parallel).
final class TemporaryFolder {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/syncr-coretests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func contents(_ folder: String? = nil) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder ?? path)) ?? []).sorted()
    }
}

@Suite(.timeLimit(.minutes(10))) struct CacheTests {
    /// The record of a folder upload of 8,000 files (about 1.8 MiB) reads back whole: past
    /// 1 MiB it read as no record, and the folder was sent again on every run.
    @Test func aLargeUploadRecordReadsBack() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path, flushes: false)
        var files: [String: UploadRecord.SentFile] = [:]
        for i in 0..<8_000 {
            files[String(format: "build/artifacts/module-%03d/file-%05d.txt", i % 100, i)] = .init(
                size: Int64(i), sha256: String(repeating: "a", count: 64),
                fingerprint: FileFingerprint(device: 1, inode: UInt64(i), size: Int64(i), mtimeNanoseconds: 1_700_000_000_000_000_000))
        }
        let record = UploadRecord(method: "PUT", url: "http://127.0.0.1:9/up/", from: "build", files: files)
        try cache.saveUploadRecord(record, key: "big")
        let size = try #require(FS.fileSize(cache.uploadRecordPath("big")))
        #expect(size > 1 << 20, "\(size) bytes")
        #expect(cache.loadUploadRecord("big")?.files == files)
    }

    /// Expected keys computed with `printf '%s' URL | md5sum`.
    @Test(arguments: [
        ("http://example.com/a", "3e27a17e84f5f8486fbc14488e12e6ff"),
        ("https://example.com/data/model.bin?t=1", "bf3428c8c4b82922f2a4a63b10ed1207"),
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ])
    func keyIsLowercaseMD5OfTheURL(url: String, md5: String) {
        #expect(Cache.key(for: url) == md5)
    }

    /// A URL fetched once keeps the key it always had (caches made before stay valid); a URL
    /// that several downloads fetch gets one key per destination, and prune keeps them all.
    @Test func aSharedURLHasOneKeyPerDestination() throws {
        let text = """
            version: 1
            downloads:
              - { url: "http://example.com/a", to: one.bin }
              - { url: "http://example.com/b", to: b.bin }
              - { url: "http://example.com/a", to: deep/two.bin }
            """
        let manifest = try ManifestLoader.parse(text: text, path: "/p/syncr.yml", directory: "/p", environment: [:])
        let keys = manifest.downloads.map { Cache.key(for: $0) }
        #expect(manifest.downloads.map(\.sharesURL) == [true, false, true])
        #expect(keys[1] == Cache.key(for: "http://example.com/b"))
        #expect(keys[0] == Cache.key(for: "http://example.com/a\u{0}/p/one.bin"))
        #expect(keys[2] == Cache.key(for: "http://example.com/a\u{0}/p/deep/two.bin"))
        #expect(CachePrune.keys(referencedBy: manifest).isSuperset(of: keys))
    }

    @Test func keyMatchesMD5Sum() throws {
        let url = "https://user@example.com:8443/path/with%20space/ü?q=1#frag"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/md5sum")
        let input = makePipe(), output = makePipe()
        process.standardInput = input
        process.standardOutput = output
        try launch(process)
        input.fileHandleForWriting.write(Data(url.utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let expected = String(text.prefix(32))
        #expect(Cache.key(for: url) == expected)
        #expect(expected.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func pathsAreNamedByKey() {
        let cache = Cache(directory: "/c")
        #expect(cache.dataPath("abc") == "/c/abc.data")
        #expect(cache.statePath("abc") == "/c/abc.state")
    }

    @Test func prepareCreatesNestedFolders() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path + "/a/b/cache")
        try cache.prepare()
        try cache.prepare()
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: cache.directory, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }

    @Test func stateRoundTrip() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        var state = EntryState(url: "https://example.com/${TOKEN}/x")
        state.finalURL = "https://cdn.example.com/x"
        state.size = 1_234_567
        state.etag = EntityTag(opaque: "abc-123", isWeak: false)
        state.lastModified = "Tue, 01 Oct 2024 10:00:00 GMT"
        state.good = 1_000_000
        state.complete = true
        state.verified = ["sha256": String(repeating: "a", count: 64)]
        state.destination = "/work/proj/x"
        state.destinationFingerprint = FileFingerprint(device: 2049, inode: 77, size: 1_234_567,
                                                       mtimeNanoseconds: 1_700_000_000_123_456_789)
        let key = Cache.key(for: "https://example.com/x")
        try cache.saveState(state, key: key)

        let loaded = try #require(cache.loadState(key))
        #expect(loaded.updated > 0, "saveState stamps the time of the update")
        var expected = state
        expected.updated = loaded.updated
        #expect(loaded == expected)
    }

    @Test func weakETagRoundTrips() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        var state = EntryState(url: "u")
        state.etag = EntityTag(opaque: "w", isWeak: true)
        try cache.saveState(state, key: "k")
        #expect(cache.loadState("k")?.etag == EntityTag(opaque: "w", isWeak: true))
    }

    @Test func missingStateLoadsAsNil() throws {
        let tmp = try TemporaryFolder()
        #expect(Cache(directory: tmp.path).loadState("nothing") == nil)
    }

    /// A torn or foreign record is no record: the data is fetched again rather than trusted.
    @Test(arguments: [
        "",
        "{\"format\":1,\"url\":\"https://example.com/x\",\"good\":10",
        "garbage \u{0}\u{1}\u{2}",
        "[]",
        "{\"good\": 5}",
    ])
    func tornStateLoadsAsNil(contents: String) throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: cache.statePath("k")))
        #expect(cache.loadState("k") == nil)
    }

    @Test func discardRemovesRecordAndData() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        try cache.saveState(EntryState(url: "u"), key: "k")
        try Data("partial bytes".utf8).write(to: URL(fileURLWithPath: cache.dataPath("k")))
        try cache.saveState(EntryState(url: "v"), key: "other")
        try cache.discard("k")
        #expect(cache.loadState("k") == nil)
        #expect(tmp.contents() == ["other.state"])
        try cache.discard("k") // discarding what is gone is fine
    }

    /// A zip of an upload's folder cut off by a kill stays as `.<key>.zip.<random>.tmp`: it
    /// belongs to the entry (listed and pruned with it). Without the cache lock (a library
    /// caller's apply), one goes once nothing wrote to it for ten minutes, of any entry; a
    /// fresh one may be another run zipping right now, and stays, as does every built archive
    /// (`<key>.zip`: one being sent is not written to, whatever its age).
    @Test func withoutTheLockOnlyStaleHalfBuiltArchivesGo() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        let key = String(repeating: "ab", count: 16), other = String(repeating: "cd", count: 16)
        let old = tmp.path + "/.\(key).zip.x1y2.tmp", fresh = tmp.path + "/.\(key).zip.z3.tmp"
        let others = tmp.path + "/.\(other).zip.q9.tmp", built = tmp.path + "/\(other).zip"
        for path in [old, fresh, others, built] { try Data("PK".utf8).write(to: URL(fileURLWithPath: path)) }
        let hourAgo = Date().addingTimeInterval(-3600)
        for path in [old, others, built] {
            try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: path)
        }
        #expect(CacheInventory.key(ofFileNamed: ".\(key).zip.x1y2.tmp") == key)
        #expect(CacheInventory.key(ofFileNamed: ".\(key).zip") == nil, "only temporaries are hidden")
        #expect(try CacheInventory.entries(in: tmp.path).first { $0.key == key }?.files.count == 2)

        #expect(cache.removeLeftoverArchives(olderThan: 600) == 2)
        #expect(tmp.contents() == [".\(key).zip.z3.tmp", "\(other).zip"], "\(tmp.contents())")
    }

    /// `CacheLock.isHeld` tells apply whether its caller holds the cache's lock, by the lock
    /// file's identity: through another spelling of the folder too, and no longer once the
    /// lock is released.
    @Test func theProcessKnowsWhetherItHoldsACacheLock() throws {
        let tmp = try TemporaryFolder()
        #expect(!CacheLock.isHeld(directory: tmp.path))
        let lock = try #require(try CacheLock.attempt(directory: tmp.path))
        #expect(CacheLock.isHeld(directory: tmp.path))
        #expect(CacheLock.isHeld(directory: tmp.path + "/."))
        #expect(!CacheLock.isHeld(directory: tmp.path + "/elsewhere"))
        lock.release()
        #expect(!CacheLock.isHeld(directory: tmp.path))
        lock.release()
        #expect(!CacheLock.isHeld(directory: tmp.path), "a second release changes nothing")
    }

    /// A folder upload to an `s3://` prefix left one multipart upload per large file: the
    /// listing counts them all (it showed the first), under the folder that holds them.
    @Test func everyUnfinishedMultipartUploadOfAnEntryIsListed() throws {
        let tmp = try TemporaryFolder()
        let key = String(repeating: "ef", count: 16)
        let source = FileFingerprint(device: 1, inode: 1, size: 1, mtimeNanoseconds: 0)
        let uploads = [("site/a.bin", 2), ("site/sub/b.bin", 1)].map { key, parts in
            MultipartRecord(uploadID: "u-\(key)", bucket: "bucket", key: key, partSize: 5 << 20, source: source,
                            parts: Dictionary(uniqueKeysWithValues: (1...parts).map { ($0, .init(etag: "\"e\"", size: 5 << 20)) }))
        }
        for (n, upload) in uploads.enumerated() {
            try JSONEncoder().encode(upload).write(to: URL(fileURLWithPath: tmp.path + "/\(key).\(n).multipart"))
        }
        let entry = try #require(try CacheInventory.entries(in: tmp.path).first { $0.key == key })
        #expect(entry.kind == .upload)
        #expect(entry.status == .unfinishedMultipart(uploads: 2, parts: 3))
        #expect(entry.url == "s3://bucket/site/")
        #expect(CacheInventory.folder(of: ["s3://b/x.bin"]) == "s3://b/x.bin")
        #expect(CacheInventory.folder(of: ["s3://b/ab.bin", "s3://b/ac.bin"]) == "s3://b/")
    }

    /// Under the cache lock every upload archive is a dead run's, whatever its age, half built
    /// or built whole (a run removes its own archive when the entry ends): all go, and nothing
    /// else does.
    @Test func leftoverArchivesOfAnyAgeGoUnderTheLock() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        let a = String(repeating: "ab", count: 16), b = String(repeating: "cd", count: 16)
        let doomed = [".\(a).zip.x1y2.tmp", ".\(b).zip.q9.tmp", "\(a).zip", "\(b).zip"]
        let kept = ["\(a).upload", "\(b).data", ".notakey.zip.q9.tmp", "notakey.zip", "\(a).zip.upload", "syncr.lock"]
        for name in doomed + kept { try Data("PK".utf8).write(to: URL(fileURLWithPath: tmp.path + "/" + name)) }
        #expect(cache.removeLeftoverArchives() == 4)
        #expect(tmp.contents() == kept.sorted(), "\(tmp.contents())")
    }

    /// An archive with no record of its upload (a run killed while it zipped or sent) is
    /// listed as what it is, an upload's archive not sent, not as a file of no record; beside
    /// a record of an earlier upload, the record says what the entry is.
    @Test func anArchiveAKilledRunLeftIsListedAsNotSent() throws {
        let tmp = try TemporaryFolder()
        let a = String(repeating: "ab", count: 16), b = String(repeating: "cd", count: 16)
        for name in ["\(a).zip", ".\(b).zip.x1y2.tmp"] {
            try Data("PK".utf8).write(to: URL(fileURLWithPath: tmp.path + "/" + name))
        }
        let entries = try CacheInventory.entries(in: tmp.path)
        for key in [a, b] {
            let entry = try #require(entries.first { $0.key == key })
            #expect(entry.kind == .upload, "\(key)")
            #expect(entry.status == .unsentArchive, "\(key)")
        }
    }

    @Test func saveStateReplacesAtomically() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        var state = EntryState(url: "u")
        state.good = 10
        try cache.saveState(state, key: "k")
        state.good = 20
        try cache.saveState(state, key: "k")
        #expect(cache.loadState("k")?.good == 20)
        #expect(tmp.contents() == ["k.state"], "no temporary file is left behind")
    }

    @Test func saveStateIntoMissingFolderThrowsNamingThePath() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path + "/missing")
        #expect {
            try cache.saveState(EntryState(url: "u"), key: "k")
        } throws: { error in
            (error as? FileError)?.description.contains(tmp.path + "/missing/k.state") == true
        }
    }
}
