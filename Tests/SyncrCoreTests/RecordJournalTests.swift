import Foundation
import SyncrLock
import Testing
@testable import SyncrCore

/// The record journal (`RecordJournal`, `JournalLine`): complete entries' records as lines of
/// one file, read back by a later run, whatever a crash or another writer left in it.
@Suite(.timeLimit(.minutes(5))) struct RecordJournalTests {
    static let a = Cache.key(for: "http://example.com/a")
    static let b = Cache.key(for: "http://example.com/b")
    static let c = Cache.key(for: "http://example.com/c")

    static func record(_ text: String) -> [UInt8] { Array("{\"url\":\"\(text)\"}".utf8) }

    static func journal(_ folder: TemporaryFolder) -> RecordJournal {
        RecordJournal(path: folder.path + "/" + RecordJournal.fileName, flushes: false)
    }

    static func bytes(_ folder: TemporaryFolder) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName)))
    }

    @Test func aLineReadsBackAsItsKeyAndRecord() throws {
        let line = JournalLine.encode(key: Self.a, record: Self.record("x"))
        #expect(String(decoding: line, as: UTF8.self).hasPrefix(Self.a + " 11 "))
        #expect(line.last == UInt8(ascii: "\n"))
        let tombstone = JournalLine.encode(key: Self.b, record: [])
        let both = line + tombstone
        both.withUnsafeBytes { buffer in
            guard case .line(let key, let record, let next) = JournalLine.parse(buffer, at: 0) else {
                Issue.record("not a line")
                return
            }
            #expect(key.hex == Self.a)
            #expect(Array(buffer[record]) == Self.record("x"))
            #expect(JournalLine.parse(buffer, at: next) == .line(key: CacheKey(hex: Self.b.utf8)!, record: both.count - 1..<both.count - 1,
                                                                  next: both.count))
        }
    }

    @Test func linesThatAreNotWholeReadAsNone() throws {
        let line = JournalLine.encode(key: Self.a, record: Self.record("x"))
        var flipped = line
        flipped[50] ^= 1
        var shorter = line
        shorter.remove(at: 50)
        for bad in [flipped, shorter, Array("not a line at all\n".utf8)] {
            bad.withUnsafeBytes { #expect(JournalLine.parse($0, at: 0) == .garbage(next: bad.count)) }
        }
        Array(line.dropLast()).withUnsafeBytes { #expect(JournalLine.parse($0, at: 0) == .incomplete) }
    }

    /// The last line for a key is its record; a tombstone ends it. A new reader of the file
    /// (the next run) sees what the writer saw.
    @Test func theLastLineOfAKeyIsItsRecord() throws {
        let folder = try TemporaryFolder()
        let writer = Self.journal(folder)
        #expect(writer.record(Self.a) == nil)
        #expect(try writer.append(Self.a, record: Self.record("a1"), durable: false))
        #expect(try writer.append(Self.b, record: Self.record("b1"), durable: true))
        #expect(try writer.append(Self.a, record: Self.record("a2"), durable: false))
        try writer.forget(Self.b)
        try writer.forget(Self.c) // no record: nothing written
        #expect(writer.record(Self.a) == Self.record("a2"))
        #expect(writer.record(Self.b) == nil)
        #expect(writer.counts == (live: 1, dead: 3))
        let reader = Self.journal(folder)
        #expect(reader.record(Self.a) == Self.record("a2"))
        #expect(reader.record(Self.b) == nil)
        #expect(reader.keys() == [Self.a])
        #expect(reader.counts == (live: 1, dead: 3))
        #expect(try Self.bytes(folder).count(where: { $0 == UInt8(ascii: "\n") }) == 5, "header and four lines")
    }

    /// A crash in the middle of an append leaves part of a line: it reads as none, and the next
    /// append ends it first, so that the two do not run together.
    @Test func aTornLastLineIsNoRecordAndIsCutOffBeforeTheNextAppend() throws {
        let folder = try TemporaryFolder()
        #expect(try Self.journal(folder).append(Self.a, record: Self.record("a"), durable: false))
        let whole = try Self.bytes(folder)
        let torn = JournalLine.encode(key: Self.b, record: Self.record("b")).prefix(40)
        try Data(whole + torn).write(to: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName))

        let next = Self.journal(folder)
        #expect(next.record(Self.a) == Self.record("a"))
        #expect(next.record(Self.b) == nil)
        #expect(try next.append(Self.c, record: Self.record("c"), durable: false))
        #expect(try Self.bytes(folder) == whole + torn + [UInt8(ascii: "\n")] + JournalLine.encode(key: Self.c, record: Self.record("c")))
        let after = Self.journal(folder)
        #expect(after.record(Self.c) == Self.record("c") && after.record(Self.a) == Self.record("a"))
    }

    /// A line damaged in the middle of the file (a bad sector, an editor) is skipped; the lines
    /// after it still count. It may have been a tombstone or a newer record, so its key has no
    /// record rather than the one before (the entry is fetched again).
    @Test func aDamagedLineIsSkipped() throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        _ = try journal.append(Self.a, record: Self.record("a1"), durable: false)
        _ = try journal.append(Self.a, record: Self.record("a2"), durable: false)
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false)
        var bytes = try Self.bytes(folder)
        let second = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }[1] + 50 // in the record of a2
        bytes[second] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName))
        let reader = Self.journal(folder)
        #expect(reader.record(Self.a) == nil)
        #expect(reader.record(Self.b) == Self.record("b"))
    }

    /// A tombstone torn by a crash (written without a flush, with `fsync: false`) still ends the
    /// record before it, in this run and after the next append has ended the torn line.
    @Test func aTornTombstoneStillEndsTheRecord() throws {
        let folder = try TemporaryFolder()
        _ = try Self.journal(folder).append(Self.a, record: Self.record("a"), durable: false)
        let torn = JournalLine.encode(key: Self.a, record: []).prefix(40)
        try Data(try Self.bytes(folder) + torn).write(to: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName))
        let next = Self.journal(folder)
        #expect(next.record(Self.a) == nil)
        _ = try next.append(Self.b, record: Self.record("b"), durable: false)
        let after = Self.journal(folder)
        #expect(after.record(Self.a) == nil && after.record(Self.b) == Self.record("b"))
    }

    /// A header damaged by a crash (zeros where the first block was) makes nothing in the file
    /// trusted: no records, and the first append starts the file again.
    @Test func aDamagedHeaderStartsTheJournalAgain() throws {
        let folder = try TemporaryFolder()
        _ = try Self.journal(folder).append(Self.a, record: Self.record("a"), durable: false)
        var bytes = try Self.bytes(folder)
        for i in 0..<8 { bytes[i] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName))
        let next = Self.journal(folder)
        #expect(next.record(Self.a) == nil)
        #expect(try next.append(Self.b, record: Self.record("b"), durable: false))
        #expect(try Self.bytes(folder) == RecordJournal.header + JournalLine.encode(key: Self.b, record: Self.record("b")))
    }

    /// A journal rewritten by another writer (compaction renames a new file over the old one)
    /// takes the next appends and tombstones, not the old file that is gone.
    @Test func appendsFollowTheFileToItsNewInode() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/" + RecordJournal.fileName
        let first = Self.journal(folder)
        _ = try first.append(Self.a, record: Self.record("a"), durable: false)
        try Data(try Self.bytes(folder)).write(to: URL(fileURLWithPath: path + ".copy"))
        #expect(rename(path + ".copy", path) == 0)
        _ = try first.append(Self.b, record: Self.record("b"), durable: false)
        try first.forget(Self.a)
        let reader = Self.journal(folder)
        #expect(reader.record(Self.a) == nil && reader.record(Self.b) == Self.record("b"))
    }

    /// `forget` asks the file, not what this object read before: a record another writer added
    /// since is ended too.
    @Test func forgetEndsARecordWrittenByAnotherWriter() throws {
        let folder = try TemporaryFolder()
        let first = Self.journal(folder)
        #expect(first.record(Self.a) == nil)
        _ = try Self.journal(folder).append(Self.a, record: Self.record("a"), durable: false)
        try first.forget(Self.a)
        #expect(Self.journal(folder).record(Self.a) == nil)
    }

    /// Another writer of the same cache (a second `Cache` over the folder, or the next run) is
    /// seen at `refresh`, and before an append, which never writes over its lines.
    @Test func anotherWritersLinesAreReadNotOverwritten() throws {
        let folder = try TemporaryFolder()
        let first = Self.journal(folder)
        let second = Self.journal(folder)
        #expect(first.record(Self.a) == nil && second.record(Self.a) == nil)
        _ = try first.append(Self.a, record: Self.record("a"), durable: false)
        _ = try second.append(Self.b, record: Self.record("b"), durable: false)
        #expect(second.record(Self.a) == Self.record("a"), "read before its own append")
        #expect(first.record(Self.b) == nil)
        first.refresh()
        #expect(first.record(Self.b) == Self.record("b"))
        let third = Self.journal(folder)
        #expect(Set(third.keys()) == [Self.a, Self.b])
    }

    /// Once dead lines outnumber live ones (and the floor), the journal is rewritten with only
    /// the live records; a reader that refreshes sees the new file.
    @Test func compactionKeepsOnlyTheLiveRecords() throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        let reader = Self.journal(folder)
        #expect(reader.record(Self.a) == nil)
        for i in 0...RecordJournal.compactionFloor {
            _ = try journal.append(Self.a, record: Self.record("a\(i)"), durable: false)
        }
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false)
        let before = try Self.bytes(folder).count
        journal.compactIfWorthIt()
        #expect(journal.counts == (live: 2, dead: 0))
        #expect(try Self.bytes(folder).count < before / 100)
        #expect(journal.record(Self.a) == Self.record("a\(RecordJournal.compactionFloor)"))
        reader.refresh()
        #expect(reader.record(Self.b) == Self.record("b"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/" + RecordJournal.fileName + ".tmp"))
        // Below the floor nothing is rewritten.
        _ = try journal.append(Self.b, record: Self.record("b2"), durable: false)
        journal.compactIfWorthIt()
        #expect(journal.counts == (live: 2, dead: 1))
    }

    /// A journal in another format (a later syncr's) is neither read nor written: records stay
    /// in `.state` files.
    @Test func aJournalOfAnotherFormatIsLeftAlone() throws {
        let folder = try TemporaryFolder()
        let foreign = Array("syncr-records 2\nwhatever comes next\n".utf8)
        try Data(foreign).write(to: URL(fileURLWithPath: folder.path + "/" + RecordJournal.fileName))
        let cache = Cache(directory: folder.path, flushes: false)
        var state = EntryState(url: "http://example.com/a")
        state.complete = true
        try cache.saveState(state, key: Self.a)
        #expect(try Self.bytes(folder) == foreign)
        #expect(FileManager.default.fileExists(atPath: cache.statePath(Self.a)))
        #expect(cache.loadState(Self.a)?.complete == true)
    }

    /// A complete record is a journal line and removes the entry's `.state` file; an unfinished
    /// one is the `.state` file, and ends the journal's record first, so the journal's (which
    /// wins where both are) never speaks for data being replaced.
    @Test func completeRecordsAreLinesAndUnfinishedOnesFiles() throws {
        let folder = try TemporaryFolder()
        let cache = Cache(directory: folder.path, flushes: false)
        var state = EntryState(url: "http://example.com/a")
        state.size = 10
        state.good = 4
        try cache.saveState(state, key: Self.a)
        #expect(folder.contents() == [Self.a + ".state"])

        state.good = 10
        state.complete = true
        try cache.saveState(state, key: Self.a)
        #expect(folder.contents() == [RecordJournal.fileName])
        #expect(Cache(directory: folder.path).loadState(Self.a)?.complete == true)

        var again = EntryState(url: "http://example.com/a")
        again.good = 2
        try cache.saveState(again, key: Self.a)
        #expect(folder.contents() == [Self.a + ".state", RecordJournal.fileName])
        let reread = Cache(directory: folder.path)
        #expect(reread.loadState(Self.a)?.complete == false)
        #expect(reread.loadState(Self.a)?.good == 2)

        try cache.discard(Self.a)
        #expect(Cache(directory: folder.path).loadState(Self.a) == nil)
        #expect(folder.contents() == [RecordJournal.fileName])
    }

    /// A flush covers every line appended before it began: a later ask for one of those lines
    /// needs no flush of its own, a line appended after it does.
    @Test func aFlushCoversTheLinesBeforeIt() throws {
        let folder = try TemporaryFolder()
        let journal = RecordJournal(path: folder.path + "/" + RecordJournal.fileName, flushes: true)
        _ = try journal.append(Self.a, record: Self.record("a"), durable: false)
        let b = try #require(try { () throws(FileError) -> UInt64? in
            _ = try journal.append(Self.b, record: Self.record("b"), durable: false)
            return try journal.forget(Self.a, durable: false)
        }())
        let ticket = try #require(journal.flushTicket(upTo: 1))
        #expect(ticket.covers == b)
        #expect(fdatasync(ticket.fd) == 0)
        close(ticket.fd)
        journal.flushed(ticket.covers)
        #expect(journal.flushTicket(upTo: b) == nil)
        _ = try journal.append(Self.c, record: Self.record("c"), durable: false)
        let later = try #require(journal.flushTicket(upTo: b + 1))
        close(later.fd)
        // A cache that does not flush never asks for one.
        let unflushed = Self.journal(folder)
        _ = try unflushed.append(Self.a, record: Self.record("a2"), durable: false)
        #expect(unflushed.flushTicket(upTo: 1) == nil)
    }

    /// Lines in the file after the header.
    static func lines(_ folder: TemporaryFolder) throws -> Int {
        try bytes(folder).count(where: { $0 == UInt8(ascii: "\n") }) - 1
    }

    /// A small finished file's record may wait in memory: this journal reads it at once, the
    /// file (the next run, a `plan` beside the run) only once it is written: with the next
    /// ones when `heldLines` wait, or at the end of the run (`flush`).
    @Test func heldRecordsAreReadAtOnceAndWrittenTogether() throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        journal.holdLines(for: .seconds(3600))  // whatever pauses a loaded machine makes
        // The first append opens (creates) the file: nothing can wait before that.
        #expect(try journal.append(Self.a, record: Self.record("a"), durable: false, mayWait: true))
        #expect(try Self.lines(folder) == 1)
        let keys = (0..<(RecordJournal.heldLines - 1)).map { Cache.key(for: "http://example.com/\($0)") }
        for key in keys {
            #expect(try journal.append(key, record: Self.record(key), durable: false, mayWait: true))
        }
        #expect(try Self.lines(folder) == 1, "held")
        #expect(journal.record(keys[5]) == Self.record(keys[5]))
        #expect(Self.journal(folder).record(keys[5]) == nil)
        // The line that makes `heldLines` writes them all, in one piece.
        #expect(try journal.append(Self.b, record: Self.record("b"), durable: false, mayWait: true))
        #expect(try Self.lines(folder) == RecordJournal.heldLines + 1)
        let reader = Self.journal(folder)
        #expect(reader.record(keys[5]) == Self.record(keys[5]) && reader.record(Self.b) == Self.record("b"))
        // The end of a run writes what still waits.
        #expect(try journal.append(Self.c, record: Self.record("c"), durable: false, mayWait: true))
        #expect(Self.journal(folder).record(Self.c) == nil)
        try journal.flush()
        #expect(Self.journal(folder).record(Self.c) == Self.record("c"))
        #expect(journal.counts == (live: RecordJournal.heldLines + 2, dead: 0))
    }

    /// Whatever else touches the journal writes the held lines first, so the file keeps the
    /// order they were taken in: a tombstone follows the record it ends, a record written at
    /// once follows those held before it, and a durable line is never flushed ahead of them.
    @Test func heldRecordsGoFirst() throws {
        let folder = try TemporaryFolder()
        let journal = RecordJournal(path: folder.path + "/" + RecordJournal.fileName, flushes: true)
        journal.holdLines(for: .seconds(3600))
        _ = try journal.append(Self.a, record: Self.record("a0"), durable: false)
        _ = try journal.append(Self.a, record: Self.record("a1"), durable: false, mayWait: true)
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false, mayWait: true)
        // A flush covers only lines in the file.
        let ticket = try #require(journal.flushTicket(upTo: 1))
        #expect(ticket.covers == 1)
        close(ticket.fd)
        try journal.forget(Self.a)
        #expect(Self.journal(folder).record(Self.a) == nil, "the tombstone came after a1")
        #expect(Self.journal(folder).record(Self.b) == Self.record("b"))
        _ = try journal.append(Self.c, record: Self.record("c1"), durable: false, mayWait: true)
        _ = try journal.append(Self.c, record: Self.record("c2"), durable: true)
        #expect(Self.journal(folder).record(Self.c) == Self.record("c2"))
        #expect(try Self.lines(folder) == 6)
        // A journal dropped with lines held writes them.
        _ = try journal.append(Self.a, record: Self.record("a2"), durable: false, mayWait: true)
        let other = Self.journal(folder)
        other.holdLines(for: .seconds(3600))
        _ = other.record(Self.a)
        _ = try other.append(Self.b, record: Self.record("b2"), durable: false, mayWait: true)
        _ = consume other
        #expect(Self.journal(folder).record(Self.b) == Self.record("b2"))
    }

    /// A record waits only when asked to (the downloader's, as it puts a file in place), and
    /// where losing it to a killed run costs little: a finished file of at most `heldFileSize`
    /// bytes whose record replaces no `.state` file.
    @Test func onlySmallFilesWithoutAStateFileWait() throws {
        let folder = try TemporaryFolder()
        let cache = Cache(directory: folder.path, flushes: false)
        cache.journal.holdLines(for: .seconds(3600))
        var state = EntryState(url: "http://example.com/a")
        state.complete = true
        state.size = 1
        _ = try cache.save(state, key: Self.c, durable: false, stateFile: false, mayWait: true)  // opens the journal
        _ = try cache.save(state, key: Self.a, durable: false, stateFile: false, mayWait: true)
        #expect(try Self.lines(folder) == 1, "held")
        _ = try cache.save(state, key: Self.b, durable: false, stateFile: false)
        #expect(try Self.lines(folder) == 3, "not asked to wait: written at once, after the held one")
        state.size = RecordJournal.heldFileSize + 1
        _ = try cache.save(state, key: Self.b, durable: false, stateFile: false, mayWait: true)
        #expect(try Self.lines(folder) == 4, "too large to wait")
        state.size = 1
        var partial = state
        partial.complete = false
        try cache.saveState(partial, key: Self.c)
        _ = try cache.save(state, key: Self.c, durable: false, stateFile: true, mayWait: true)
        #expect(!FileManager.default.fileExists(atPath: cache.statePath(Self.c)))
        #expect(Cache(directory: folder.path).loadState(Self.c)?.complete == true, "written before the .state file went")
    }

    /// A line waits at most `heldTime`: the first line taken after that writes every held one.
    @Test func heldRecordsWaitOnlySoLong() throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        _ = try journal.append(Self.a, record: Self.record("a"), durable: false)
        journal.holdLines(for: .zero)
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false, mayWait: true)
        _ = try journal.append(Self.c, record: Self.record("c"), durable: false, mayWait: true)
        #expect(try Self.lines(folder) == 3)
        journal.holdLines(for: .seconds(3600))
        _ = try journal.append(Self.a, record: Self.record("a2"), durable: false, mayWait: true)
        #expect(try Self.lines(folder) == 3)
        #expect(Self.journal(folder).record(Self.a) == Self.record("a"))
    }

    /// A held line that no other line follows is written once it has waited `heldTime` (a
    /// timer): a run whose last small files come before a long download, or uploads, no longer
    /// keeps their records in memory until it ends.
    @Test func aHeldRecordIsWrittenOnceItsTimeIsUpThoughNoLineFollows() async throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        _ = try journal.append(Self.a, record: Self.record("a"), durable: false)  // opens the file
        journal.holdLines(for: .milliseconds(200))
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false, mayWait: true)
        var written = false
        for _ in 0..<600 where !written {  // a minute at most, on a loaded machine
            try await Task.sleep(for: .milliseconds(100))
            written = Self.journal(folder).record(Self.b) == Self.record("b")
        }
        #expect(written, "written with no later line, flush or end of the journal")
        #expect(try Self.lines(folder) == 2)
    }

    /// A journal with `a` in its file and `b` held in memory (for an hour, whatever pauses a
    /// loaded machine makes), and the journal's path.
    static func journalHoldingB(_ folder: TemporaryFolder) throws -> (RecordJournal, String) {
        let journal = Self.journal(folder)
        journal.holdLines(for: .seconds(3600))
        _ = try journal.append(Self.a, record: Self.record("a"), durable: false)
        _ = try journal.append(Self.b, record: Self.record("b"), durable: false, mayWait: true)
        return (journal, folder.path + "/" + RecordJournal.fileName)
    }

    /// Held lines that cannot be written stay held, in order: the end of the run's flush says
    /// so (after flushing what is in the file), and a later write, once the trouble is gone,
    /// writes them.
    @Test func heldRecordsThatCannotBeWrittenStayHeldAndAreReported() throws {
        let folder = try TemporaryFolder()
        let (journal, path) = try Self.journalHoldingB(folder)
        #expect(unlink(path) == 0 && mkdir(path, 0o755) == 0)
        #expect(throws: FileError(path: path, operation: "open", errno: EISDIR)) { try journal.flush() }
        #expect(journal.record(Self.b) == Self.record("b"), "still held")
        #expect(throws: FileError(path: path, operation: "open", errno: EISDIR)) {
            _ = try journal.append(Self.c, record: Self.record("c"), durable: false)
        }
        // Reading the file again, or a compaction, keeps them too.
        journal.refresh()
        journal.compactIfWorthIt()
        #expect(journal.keys() == [Self.b])
        #expect(rmdir(path) == 0)
        try journal.flush()
        let reader = Self.journal(folder)
        #expect(reader.record(Self.b) == Self.record("b"))
        #expect(reader.record(Self.a) == nil, "in the file that was removed")
    }

    /// A journal of another format taking the name mid-run (a later syncr's, against the cache
    /// lock) cannot take the held records: an error that says so, and they stay held.
    @Test func heldRecordsAreNotWrittenIntoAJournalOfAnotherFormat() throws {
        let folder = try TemporaryFolder()
        let (journal, path) = try Self.journalHoldingB(folder)
        let foreign = Array("syncr-records 2\nwhatever comes next\n".utf8)
        try Data(foreign).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(throws: FileError(path: path, operation: "write records into another syncr version's journal",
                                  errno: ENOTSUP)) { try journal.flush() }
        #expect(journal.record(Self.b) == Self.record("b"), "still held")
        #expect(try Self.bytes(folder) == foreign, "the other version's journal is left as it was")
    }

    /// A journal in `folder` holding `record` as `a`'s, read into a `JournalFile`, and where
    /// that says the record is.
    static func found(_ record: [UInt8], in folder: TemporaryFolder) throws -> (JournalFile, JournalFile.Found) {
        _ = try journal(folder).append(a, record: record, durable: false)
        var file = JournalFile()
        file.load(folder.path + "/" + RecordJournal.fileName)
        return (file, try #require(file.find(CacheKey(hex: a.utf8)!)))
    }

    /// A record is read outside the journal's lock, from the file its place was found in: a
    /// reload meanwhile (another file renamed over the name) does not close that file under the
    /// reader, nor make it read another file's bytes at that place.
    @Test func aRecordFoundBeforeAReloadIsReadFromItsOwnFile() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/" + RecordJournal.fileName
        var (file, found) = try Self.found(Self.record("first"), in: folder)
        // Another file under the name, whose bytes at that place are another record's.
        let otherFolder = try TemporaryFolder()
        _ = try Self.journal(otherFolder).append(Self.a, record: Self.record("later"), durable: false)
        #expect(rename(otherFolder.path + "/" + RecordJournal.fileName, path) == 0)
        file.catchUp(path)
        #expect(file.find(CacheKey(hex: Self.a.utf8)!)?.read() == Self.record("later"))
        #expect(found.read() == Self.record("first"))
    }

    /// A record whose place another writer took meanwhile (one that ignored the cache lock, cut
    /// the file and appended its own lines) reads as no record, not as the other entry's: the
    /// line is checked again (length, CRC-32, key) when it is read outside the lock.
    @Test func aPlaceAnotherWriterTookReadsAsNoRecord() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/" + RecordJournal.fileName
        // The place found holds the file open; the JournalFile itself may go.
        let (_, found) = try Self.found(Self.record("aaaa"), in: folder)
        // The same file, cut back to its header, then another key's line of the same length.
        #expect(truncate(path, off_t(RecordJournal.header.count)) == 0)
        _ = try Self.journal(folder).append(Self.b, record: Self.record("bbbb"), durable: false)
        #expect(Self.journal(folder).record(Self.b) == Self.record("bbbb"))
        #expect(found.read() == nil)
    }

    /// Readers at once while the journal is rewritten into new files and reloaded under them:
    /// each read gives the key's record (the ThreadSanitizer run of `.ci/run` checks the
    /// sharing). The readers go on until the last reload is done, so that reads overlap them.
    @Test func recordsReadWhileTheJournalIsRewrittenAreWhole() throws {
        let folder = try TemporaryFolder()
        let journal = Self.journal(folder)
        let keys = (0..<64).map { Cache.key(for: "http://example.com/\($0)") }
        for (i, key) in keys.enumerated() {
            _ = try journal.append(key, record: Self.record("r\(i)"), durable: false)
        }
        let writing = Locked(true)
        let reads = Locked((total: 0, wrong: 0))
        let finished = DispatchSemaphore(value: 0)
        for reader in 0..<2 {
            Thread.start(named: "journal-reader-\(reader)") {
                var i = reader
                while writing.withLock({ $0 }) || i < 100 {
                    let ok = journal.record(keys[i % keys.count]) == Self.record("r\(i % keys.count)")
                    reads.withLock { $0.total += 1; if !ok { $0.wrong += 1 } }
                    i += 1
                }
                finished.signal()
            }
        }
        for _ in 0..<5 {
            // Dead lines past the floor, then a rewrite into a new file and a reload.
            for _ in 0...RecordJournal.compactionFloor {
                _ = try journal.append(keys[0], record: Self.record("r0"), durable: false)
            }
            journal.compactIfWorthIt()
            #expect(journal.counts.dead == 0, "rewritten")
            journal.refresh()
        }
        writing.withLock { $0 = false }
        finished.wait()
        finished.wait()
        let (total, wrong) = reads.withLock { $0 }
        #expect(wrong == 0, "\(wrong) of \(total) reads")
        #expect(total >= 200)
    }
}
