import Foundation
import Testing
@testable import SyncrArchive

@Suite(.timeLimit(.minutes(10))) struct ZipWriterDeterminismTests {
    /// Sets every path's modification time (links themselves included) to `seconds`.
    private func touchAll(_ root: String, seconds: Int) throws {
        let script = """
        import os, sys
        t = int(sys.argv[2])
        for d, dirs, files in os.walk(sys.argv[1]):
            for n in dirs + files:
                os.utime(os.path.join(d, n), (t, t), follow_symlinks=False)
        """
        #expect(try python(script, [root, String(seconds)]).status == 0)
    }

    @Test func sameTreeSameBytesWhateverTheTimesAndThreads() throws {
        let scratch = try Scratch("determinism")
        let root = try makeSampleTree(scratch)
        let first = scratch.path + "/1.zip", second = scratch.path + "/2.zip", single = scratch.path + "/3.zip"
        _ = try ZipWriter.write(directory: root, to: first, options: .init(deterministic: true, threads: 2))
        try touchAll(root, seconds: 1_234_567_890)
        _ = try ZipWriter.write(directory: root, to: second, options: .init(deterministic: true, threads: 2))
        _ = try ZipWriter.write(directory: root, to: single, options: .init(deterministic: true, threads: 1))
        let a = try Data(contentsOf: URL(fileURLWithPath: first))
        #expect(a == (try Data(contentsOf: URL(fileURLWithPath: second))), "touched mtimes change nothing")
        #expect(a == (try Data(contentsOf: URL(fileURLWithPath: single))), "threads: 1 gives the same bytes as threads: 2")
        let listing = try python(Scripts.list, [first]).stdout
        for line in listing.split(separator: "\n") {
            #expect(line.split(separator: "\t")[4] == "1980-01-01T00:00:00")
        }
    }

    @Test(arguments: [1, 2, 3, 8])
    func parallelOutputIsByteIdenticalToSequential(threads: Int) throws {
        let scratch = try Scratch("threads")
        // Many blocks of one file, several files, some stored, so blocks finish out of order.
        try scratch.write("tree/a.txt", compressibleData(megabytes: 7))
        try scratch.write("tree/b.bin", randomData(bytes: 3 << 20 + 12345))
        for i in 0..<50 { try scratch.write("tree/small/\(i).txt", Data(String(repeating: "\(i) ", count: i * 300).utf8)) }
        try scratch.write("tree/c.txt", compressibleData(megabytes: 2) + randomData(bytes: 1 << 20))
        let reference = scratch.path + "/ref.zip", candidate = scratch.path + "/cand.zip"
        _ = try ZipWriter.write(directory: scratch.path + "/tree", to: reference, options: .init(deterministic: true, threads: 1))
        _ = try ZipWriter.write(directory: scratch.path + "/tree", to: candidate, options: .init(deterministic: true, threads: threads))
        #expect(try Data(contentsOf: URL(fileURLWithPath: reference)) == Data(contentsOf: URL(fileURLWithPath: candidate)))
        #expect(try run("/usr/bin/unzip", ["-tq", candidate]).status == 0)
    }

    @Test func sourceDateEpochSetsEveryTimestamp() throws {
        let scratch = try Scratch("sde")
        let root = try makeSampleTree(scratch)
        let archive = scratch.path + "/out.zip"
        // 2023-11-14 22:13:20 UTC (an even second: DOS times count in two-second steps).
        _ = try ZipWriter.write(directory: root, to: archive, options: .init(sourceDateEpoch: 1_700_000_000))
        let listing = try python(Scripts.list, [archive]).stdout
        let lines = listing.split(separator: "\n")
        #expect(lines.count == 17)
        for line in lines {
            #expect(line.split(separator: "\t")[4] == "2023-11-14T22:13:20", "\(line)")
        }
        // Without either option, the files' own (local) times are stored.
        try touchAll(root, seconds: 1_000_000_000)
        let plain = scratch.path + "/plain.zip"
        _ = try ZipWriter.write(directory: root, to: plain)
        let expected = try python("import time; print('%04d-%02d-%02dT%02d:%02d:%02d' % time.localtime(1000000000)[:6])", []).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for line in try python(Scripts.list, [plain]).stdout.split(separator: "\n") {
            #expect(line.split(separator: "\t")[4] == expected, "\(line)")
        }
    }

    @Test func dosDateTimeFields() {
        let t = ZipWriter.DOSDateTime(year: 2023, month: 11, day: 14, hour: 22, minute: 13, second: 21)
        #expect(t.date == UInt16((43 << 9) | (11 << 5) | 14))
        #expect(t.time == UInt16((22 << 11) | (13 << 5) | 10))
        #expect(ZipWriter.DOSDateTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0) == .epoch)
        #expect(ZipWriter.DOSDateTime(year: 2200, month: 1, day: 1, hour: 0, minute: 0, second: 0).date >> 9 == 127)
        #expect(ZipWriter.utcTime(0) == .epoch)
    }
}
