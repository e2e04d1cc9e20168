import Foundation
import Testing
@testable import SyncrCore

/// The cache listing that spares a run the `open` and `stat` of absent names: it may say
/// "nothing there" only when the folder showed nothing for the key and no entry asked before.
@Suite(.timeLimit(.minutes(5))) struct CacheIndexTests {
    static let keyA = Cache.key(for: "http://example.com/a")
    static let keyB = Cache.key(for: "http://example.com/b")
    static let keyC = Cache.key(for: "http://example.com/c")

    @Test func namesTheRecordsAndDataTheFolderHeld() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        #expect(FileManager.default.createFile(atPath: cache.statePath(Self.keyA), contents: Data("{}".utf8)))
        #expect(FileManager.default.createFile(atPath: cache.dataPath(Self.keyA), contents: Data()))
        #expect(FileManager.default.createFile(atPath: cache.dataPath(Self.keyB), contents: Data()))
        // Not an entry's: other suffixes, upper case, a temporary record.
        #expect(FileManager.default.createFile(atPath: tmp.path + "/" + Self.keyC + ".upload", contents: Data()))
        #expect(FileManager.default.createFile(atPath: tmp.path + "/" + Self.keyC.uppercased() + ".state", contents: Data()))
        #expect(FileManager.default.createFile(atPath: cache.statePath(Self.keyC) + ".tmp", contents: Data()))
        let index = CacheIndex(directory: tmp.path)
        #expect(index.mayHave(Self.keyA) == (record: true, data: true))
        #expect(index.mayHave(Self.keyB) == (record: false, data: true))
        #expect(index.mayHave(Self.keyC) == (record: false, data: false))
    }

    /// The listing says whether an upload's archive may be there, so that apply lists the
    /// folder again for archives killed runs left only then.
    @Test func tellsWhetherAnArchiveMayBeThere() throws {
        let tmp = try TemporaryFolder()
        let cache = Cache(directory: tmp.path)
        #expect(FileManager.default.createFile(atPath: cache.statePath(Self.keyA), contents: Data("{}".utf8)))
        #expect(!CacheIndex(directory: tmp.path).mayHoldArchives)
        #expect(FileManager.default.createFile(atPath: tmp.path + "/" + Self.keyB + ".zip", contents: Data()))
        #expect(CacheIndex(directory: tmp.path).mayHoldArchives)
        try FileManager.default.removeItem(atPath: tmp.path + "/" + Self.keyB + ".zip")
        #expect(FileManager.default.createFile(atPath: tmp.path + "/." + Self.keyB + ".zip.x1y2.tmp", contents: Data()))
        #expect(CacheIndex(directory: tmp.path).mayHoldArchives)
        #expect(CacheIndex(directory: tmp.path + "/missing").mayHoldArchives == false, "a missing folder holds none")
    }

    /// Two entries with one URL share a key: the second may find what the first one wrote.
    @Test func aKeyAskedAgainIsLookedUpOnDisk() throws {
        let tmp = try TemporaryFolder()
        let index = CacheIndex(directory: tmp.path)
        #expect(index.mayHave(Self.keyA) == (record: false, data: false))
        #expect(index.mayHave(Self.keyA) == (record: true, data: true))
    }

    @Test func aMissingFolderHoldsNothingAndAnUnreadableOneIsNotTrusted() throws {
        let tmp = try TemporaryFolder()
        #expect(CacheIndex(directory: tmp.path + "/none").mayHave(Self.keyA) == (record: false, data: false))
        let file = tmp.path + "/a-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(CacheIndex(directory: file).mayHave(Self.keyA) == (record: true, data: true))
    }

    /// A key that is not 32 lowercase hex digits is never answered from the listing.
    @Test func anOddKeyIsLookedUpOnDisk() throws {
        let tmp = try TemporaryFolder()
        #expect(CacheIndex(directory: tmp.path).mayHave("not-a-key") == (record: true, data: true))
    }
}
