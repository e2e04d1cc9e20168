#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP

/// The recorder's rules, on a real cache folder: a record vouches only for flushed bytes, it
/// goes before the bytes it counted when starting over, and it names the version the bytes are of.
@Suite(.timeLimit(.minutes(10)))
struct EntryRecorderTests {
    let folder: TemporaryFolder
    let key = "0123456789abcdef0123456789abcdef"

    init() throws {
        folder = try TemporaryFolder()
    }

    func cache(flushes: Bool = true) throws -> Cache {
        let cache = Cache(directory: folder.path + "/cache", flushes: flushes)
        try cache.prepare()
        return cache
    }

    /// A recorder over a fresh cache file holding `count` bytes.
    func recorder(_ cache: Cache, bytes count: Int = 1000) throws -> (EntryRecorder, Int32) {
        let path = cache.dataPath(key)
        try Data(Resource.pattern(count)).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        return (EntryRecorder(state: EntryState(url: "http://scripted.test/f.bin"), cache: cache, key: key, fd: fd,
                              redactor: Redactor(secrets: [])), fd)
    }

    static func head(_ status: Int, _ fields: KeyValuePairs<String, String>) -> HTTPResponseHead {
        HTTPResponseHead(status: status, fields: fields.map { .init(name: $0.key, value: $0.value) },
                         effectiveURL: "http://scripted.test/f.bin")
    }

    @Test func aCheckpointWhoseFlushFailsWritesNoRecord() async throws {
        let cache = try cache()
        // A pipe cannot be flushed (fdatasync: EINVAL): the bytes are not known to be on disk.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let recorder = EntryRecorder(state: EntryState(url: "u"), cache: cache, key: key, fd: ends[1],
                                     redactor: Redactor(secrets: []))
        await #expect(throws: FileError.self) { try await recorder.checkpoint(good: 100, head: nil) }
        #expect(cache.loadState(key) == nil)
        #expect(await recorder.state.cachedBytes == 0, "nor counts the bytes in memory")
    }

    @Test func aCheckpointRecordsTheRangesAndTheVersion() async throws {
        let cache = try cache()
        let (recorder, fd) = try recorder(cache)
        defer { close(fd) }
        let head = Self.head(206, ["Content-Range": "bytes 0-999/1000", "ETag": "\"v1\""])
        try await recorder.checkpoint([0..<100, 500..<700], head: head)
        let saved = try #require(cache.loadState(key))
        #expect(saved.ranges == RangeSet([0..<100, 500..<700]))
        #expect(saved.etag?.headerValue == "\"v1\"" && saved.size == 1000)
    }

    @Test func aCheckpointThatAddsNothingWritesNothing() async throws {
        let cache = try cache()
        let (recorder, fd) = try recorder(cache)
        defer { close(fd) }
        try await recorder.checkpoint(good: 400, head: nil)
        FS.remove(cache.statePath(key))
        // Already recorded: no flush, no write.
        try await recorder.checkpoint([100..<400], head: nil)
        #expect(cache.loadState(key) == nil)
        try await recorder.checkpoint([300..<500], head: nil)
        #expect(cache.loadState(key)?.ranges == RangeSet([0..<500]))
    }

    @Test func startingOverRemovesTheRecordAndThenTheBytes() async throws {
        let cache = try cache()
        let (recorder, fd) = try recorder(cache)
        defer { close(fd) }
        try await recorder.checkpoint(good: 1000, head: Self.head(200, ["Content-Length": "1000", "ETag": "\"v1\""]))
        try await recorder.reset()
        #expect(cache.loadState(key) == nil)
        #expect(FS.fileSize(cache.dataPath(key)) == 0)
        let state = await recorder.state
        #expect(state.cachedBytes == 0 && state.etag == nil && state.url == "http://scripted.test/f.bin")
        // The next answer names the version again.
        await recorder.adopt(Self.head(200, ["Content-Length": "10", "ETag": "\"v2\""]))
        #expect(await recorder.state.etag?.headerValue == "\"v2\"")
    }

    @Test func a200NamesTheVersionButA206KeepsTheOneResumed() async throws {
        let cache = try cache()
        let (recorder, fd) = try recorder(cache)
        defer { close(fd) }
        try await recorder.update { $0.etag = EntityTag(parsing: "\"v1\""); $0.size = 1000 }
        // A 206 to a resume is a part of the recorded version; it does not rename it.
        await recorder.adopt(Self.head(206, ["Content-Range": "bytes 400-999/1000", "ETag": "\"v9\""]))
        #expect(await recorder.state.etag?.headerValue == "\"v1\"")

        let (fresh, fd2) = try self.recorder(cache)
        defer { close(fd2) }
        try await fresh.update { $0.etag = EntityTag(parsing: "\"v1\""); $0.size = 1000 }
        // A 200 is the whole file: its validators and size are the record's from now on.
        await fresh.adopt(Self.head(200, ["Content-Length": "1200", "ETag": "\"v2\""]))
        let state = await fresh.state
        #expect(state.etag?.headerValue == "\"v2\"" && state.size == 1200)
    }

    @Test func rememberCountsTheBytesWithoutWritingARecord() async throws {
        let cache = try cache()
        let (recorder, fd) = try recorder(cache)
        defer { close(fd) }
        await recorder.remember(0..<1000, head: Self.head(200, ["Content-Length": "1000"]))
        #expect(await recorder.state.cachedBytes == 1000)
        #expect(cache.loadState(key) == nil, "a finished file is flushed once, before it is moved")
    }

    /// A fresh entry's first record, which needs no flush, is written in place; where a record
    /// turned up meanwhile (another entry with the same URL) it is replaced whole instead.
    @Test func theFirstRecordIsWrittenInPlaceUnlessOneAppeared() async throws {
        let cache = try cache()
        let path = cache.dataPath(key)
        try Data(Resource.pattern(10)).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let fresh = EntryRecorder(state: EntryState(url: "http://scripted.test/f.bin"), cache: cache, key: key, fd: fd,
                                  redactor: Redactor(secrets: []), recordOnDisk: false)
        // Unfinished: a record file (a complete record would be a journal line).
        try await fresh.update(durable: false) { $0.size = 10; $0.good = 4 }
        #expect(cache.loadState(key)?.good == 4)
        #expect(FileManager.default.fileExists(atPath: cache.statePath(key)))
        #expect(!FileManager.default.fileExists(atPath: cache.statePath(key) + ".tmp"))

        // A stale record is there although the recorder was told there is none.
        var stale = EntryState(url: "http://scripted.test/other.bin")
        stale.size = 99
        try cache.saveState(stale, key: key)
        let second = EntryRecorder(state: EntryState(url: "http://scripted.test/f.bin"), cache: cache, key: key, fd: fd,
                                   redactor: Redactor(secrets: []), recordOnDisk: false)
        try await second.update(durable: false) { $0.size = 10 }
        #expect(cache.loadState(key)?.size == 10, "replaced whole, not appended to")
        #expect(cache.loadState(key)?.url == "http://scripted.test/f.bin")
    }

    /// `FS.writeNew` never writes over what is there.
    @Test func writeNewLeavesAnExistingFileAlone() throws {
        let path = folder.path + "/taken"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try FS.writeNew(Array("new".utf8), to: path) == false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("old".utf8))
        #expect(try FS.writeNew(Array("new".utf8), to: path + "2") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "2")) == Data("new".utf8))
    }
}
