#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import SyncrHTTP
import Synchronization
import SyncrLock
import Foundation

/// `ReadAhead` against real files, with the test in the engine's place: it asks for bytes as
/// curl's read callback does, and waits for the resume handler when told to pause.
@Suite("ReadAhead", .timeLimit(.minutes(5)))
struct ReadAheadTests {
    /// Bytes that differ at every offset, so a misplaced buffer shows.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(seed)) }
    }

    /// The engine's side: counts resumes, and waits for the next one.
    final class Driver: Sendable {
        let body: ReadAhead
        private let resumes = Locked(0)

        init(_ body: ReadAhead) {
            self.body = body
            body.onResume { [resumes] in resumes.withLock { $0 += 1 } }
        }

        var resumed: Int { resumes.withLock { $0 } }

        /// Reads up to `count` bytes of body as curl would (nil: `.fail`), waiting out pauses.
        func next(_ count: Int) async throws -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            while true {
                let before = resumed
                switch buffer.withUnsafeMutableBytes({ body.read(into: $0) }) {
                case .bytes(let n): return Array(buffer[..<n])
                case .fail: return nil
                case .pause: try await waitForResume(after: before)
                }
            }
        }

        /// Everything left, `step` bytes at a time.
        func rest(step: Int) async throws -> [UInt8]? {
            var all: [UInt8] = []
            while true {
                guard let piece = try await next(step) else { return nil }
                if piece.isEmpty { return all }
                all += piece
            }
        }

        func waitForResume(after count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while resumed == count {
                try #require(ContinuousClock.now < deadline, "the transfer was never resumed")
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    static func readAhead(_ file: TempFile, disk: DiskWriter) throws -> ReadAhead {
        ReadAhead(try BodyReader.open(.file(path: file.path)).get(), path: file.path, disk: disk)
    }

    @Test(arguments: [7, 16 << 10, 700 << 10])
    func theBodyArrivesWholeAndInOrderWhateverCurlAsksFor(step: Int) async throws {
        let bytes = Self.pattern((1 << 20) + 123)
        let file = try TempFile(contents: bytes)
        let driver = Driver(try Self.readAhead(file, disk: DiskWriter(threads: 1)))
        driver.body.prime()
        #expect(try await driver.rest(step: step) == bytes)
        #expect(driver.body.delivered == Int64(bytes.count))
        #expect(driver.body.failure == nil)
    }

    /// Many hand-offs between a reader and a caller that takes everything at once, on a
    /// thread of its own as the engine is: tiny buffers, so that 3 MB go through tens of
    /// thousands of pauses and resumes. A resume lost between the reader finding no room and
    /// giving up reading (while the caller emptied both buffers and paused) stalls it for good.
    @Test func everyPauseIsResumedHoweverTheReaderAndCallerInterleave() async throws {
        let bytes = Self.pattern(3_000_000, seed: 17)
        let file = try TempFile(contents: bytes)
        let body = ReadAhead(try BodyReader.open(.file(path: file.path)).get(), path: file.path,
                             disk: DiskWriter(threads: 1), bufferSize: 64)
        let resumes = Atomic<Int>(0)
        body.onResume { resumes.add(1, ordering: .releasing) }
        body.prime()
        let (received, pauses) = await withCheckedContinuation { (done: CheckedContinuation<([UInt8]?, Int), Never>) in
            Thread.start(named: "test-engine") {
                var all: [UInt8] = [], pauses = 0
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let seen = resumes.load(ordering: .acquiring)
                    switch buffer.withUnsafeMutableBytes({ body.read(into: $0) }) {
                    case .bytes(0): return done.resume(returning: (all, pauses))
                    case .bytes(let n): all += buffer[..<n]
                    case .fail: return done.resume(returning: (nil, pauses))
                    case .pause:
                        pauses += 1
                        // Per pause, not for the whole body: under ThreadSanitizer in a full run
                        // the body takes longer than this, but one resume never does.
                        let deadline = ContinuousClock.now + .seconds(20)
                        while resumes.load(ordering: .acquiring) == seen {
                            if ContinuousClock.now > deadline { return done.resume(returning: (nil, pauses)) }
                            sched_yield()
                        }
                    }
                }
            }
        }
        // A Bool, not the arrays: a failure must not print a megabyte.
        let whole = received == bytes
        #expect(whole, "the body arrived whole, each pause resumed: \(received?.count ?? -1) bytes, \(pauses) pauses")
        #expect(pauses > 100, "the caller did wait for the reader: \(pauses) pauses")
    }

    @Test func aSmallBodyIsReadBeforeTheTransferWithoutAHandOff() async throws {
        let bytes = Self.pattern(200_000, seed: 3)
        let file = try TempFile(contents: bytes)
        let disk = DiskWriter(threads: 1)
        let driver = Driver(try Self.readAhead(file, disk: disk))
        driver.body.prime()
        #expect(try await driver.rest(step: 64 << 10) == bytes)
        #expect(disk.handOffs.load(ordering: .relaxed) == 0, "no job for a disk thread")
        #expect(driver.resumed == 0, "never paused")
    }

    @Test func aRewindSendsTheBodyAgainFromWhereCurlAsks() async throws {
        let bytes = Self.pattern(900_000, seed: 5)
        let file = try TempFile(contents: bytes)
        let driver = Driver(try Self.readAhead(file, disk: DiskWriter(threads: 1)))
        driver.body.prime()
        let first = try #require(try await driver.next(300_000))
        #expect(first == Array(bytes[..<first.count]))
        // curl rewinds to 0 before sending the body again (a redirect, an auth round).
        #expect(driver.body.seek(to: 0))
        #expect(try await driver.rest(step: 100_000) == bytes)
        // And to the middle, which a retry from an offset would do.
        #expect(driver.body.seek(to: 500_000))
        #expect(try await driver.rest(step: 100_000) == Array(bytes[500_000...]))
        #expect(driver.body.delivered == Int64(first.count + bytes.count + 400_000))
        #expect(!driver.body.seek(to: Int64(bytes.count) + 1), "past the end")
    }

    /// A rewind while a read is in flight: the read lands after it and is not used, and the
    /// bytes curl gets next are the ones at the new offset.
    @Test func aReadInFlightAcrossARewindIsThrownAway() async throws {
        let bytes = Self.pattern(900_000, seed: 13)
        let file = try TempFile(contents: bytes)
        let reads = Atomic<Int>(0), open = Atomic<Bool>(false), reading = Atomic<Bool>(false)
        let disk = DiskWriter(threads: 1, beforeRead: { _ in
            if reads.add(1, ordering: .relaxed).newValue == 2 {
                reading.store(true, ordering: .releasing)
                while !open.load(ordering: .acquiring) { usleep(1000) }
            }
        })
        defer { open.store(true, ordering: .releasing) }
        let driver = Driver(try Self.readAhead(file, disk: disk))
        driver.body.prime()
        let first = try #require(try await driver.next(ReadAhead.bufferSize))
        #expect(first == Array(bytes[..<ReadAhead.bufferSize]))
        // The second buffer (from 256 KiB) is being read; curl rewinds to 100,000 meanwhile.
        while !reading.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        #expect(driver.body.seek(to: 100_000))
        open.store(true, ordering: .releasing)
        #expect(try await driver.rest(step: 50_000) == Array(bytes[100_000...]))
    }

    @Test func aStuckDiskPausesTheTransferUntilItAnswers() async throws {
        let bytes = Self.pattern(1 << 20, seed: 7)
        let file = try TempFile(contents: bytes)
        // The first read (by `prime`) passes; the disk thread's reads wait for the gate.
        let reads = Atomic<Int>(0), open = Atomic<Bool>(false)
        let disk = DiskWriter(threads: 1, beforeRead: { _ in
            if reads.add(1, ordering: .relaxed).newValue > 1 {
                while !open.load(ordering: .acquiring) { usleep(1000) }
            }
        })
        // However the test ends, the disk thread does not wait for the rest of the run.
        defer { open.store(true, ordering: .releasing) }
        let driver = Driver(try Self.readAhead(file, disk: disk))
        driver.body.prime()
        // What was read before the disk got stuck goes out, then the transfer pauses.
        let first = try #require(try await driver.next(1 << 20))
        #expect(first == Array(bytes[..<ReadAhead.bufferSize]))
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(buffer.withUnsafeMutableBytes { driver.body.read(into: $0) } == .pause)
        #expect(driver.resumed == 0)
        open.store(true, ordering: .releasing)
        try await driver.waitForResume(after: 0)
        #expect(try await driver.rest(step: 1 << 20) == Array(bytes[ReadAhead.bufferSize...]))
    }

    @Test func aFileThatGrowsWhileItIsReadFailsTheBodyBeforeItsEnd() async throws {
        let bytes = Self.pattern(700_000, seed: 9)
        let file = try TempFile(contents: bytes)
        let driver = Driver(try Self.readAhead(file, disk: DiskWriter(threads: 1)))
        driver.body.prime()
        _ = try #require(try await driver.next(100_000))
        let more = [UInt8](repeating: 1, count: 10)
        _ = more.withUnsafeBytes { pwrite(file.fd, $0.baseAddress, $0.count, off_t(bytes.count)) }
        var sent = 100_000
        while let piece = try await driver.next(100_000), !piece.isEmpty { sent += piece.count }
        #expect(sent < bytes.count, "the last bytes never reach curl")
        let failure = try #require(driver.body.failure)
        guard case .changedWhileSending(let path, _) = failure else {
            Issue.record("expected changedWhileSending, got \(failure)")
            return
        }
        #expect(path == file.path)
        #expect("\(failure)".contains("changed while it was being uploaded"), "\(failure)")
    }

    @Test func closingWhileAReadIsInFlightLeavesTheFileToTheReader() async throws {
        let bytes = Self.pattern(1 << 20, seed: 11)
        let file = try TempFile(contents: bytes)
        let reads = Atomic<Int>(0), open = Atomic<Bool>(false), reading = Atomic<Bool>(false)
        let disk = DiskWriter(threads: 1, beforeRead: { _ in
            if reads.add(1, ordering: .relaxed).newValue > 1 {
                reading.store(true, ordering: .releasing)
                while !open.load(ordering: .acquiring) { usleep(1000) }
            }
        })
        defer { open.store(true, ordering: .releasing) }
        let before = descriptors(of: file.path)
        let driver = Driver(try Self.readAhead(file, disk: disk))
        driver.body.prime()
        #expect(descriptors(of: file.path) == before + 1, "the body's file is open")
        _ = try #require(try await driver.next(ReadAhead.bufferSize))
        while !reading.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        driver.body.close()
        #expect(descriptors(of: file.path) == before + 1, "still open: the disk thread reads from it")
        open.store(true, ordering: .releasing)
        let deadline = ContinuousClock.now + .seconds(20)
        while descriptors(of: file.path) != before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(descriptors(of: file.path) == before, "closed by the reader once its read landed")
        #expect(driver.resumed == 0, "a closed body resumes nothing")
        #expect(!driver.body.seek(to: 0), "a closed body is not sent again")
    }

    /// Descriptors of this process open on `path` (other tests' files do not count).
    func descriptors(of path: String) -> Int {
        guard let dir = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(dir) }
        var count = 0
        var target = [CChar](repeating: 0, count: 4096)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
            if n > 0, String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) == path { count += 1 }
        }
        return count
    }
}
