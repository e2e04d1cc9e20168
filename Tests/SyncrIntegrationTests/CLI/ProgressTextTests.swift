import Testing
@testable import syncr
@testable import SyncrCore

/// The pieces of the progress display that need no process: fitting text to a width, the
/// numbers shown, the lines of the bar, the summary and XML escaping.
@Suite("progress text", .timeLimit(.minutes(5)))
struct ProgressTextTests {
    @Test(arguments: [
        ("short.bin", 20, "short.bin"),
        ("out/a/very/long/path/to/the/file.bin", 20, "out/a...the/file.bin"),
        ("abcdefghij", 5, "...ij"),
        ("abcdefghij", 3, "..."),
    ])
    func fitKeepsStartAndEnd(text: String, columns: Int, expected: String) {
        let fitted = ProgressText.fit(text, columns)
        #expect(ProgressText.width(fitted) <= columns)
        #expect(fitted == expected)
    }

    @Test func wideCharactersTakeTwoColumns() {
        #expect(ProgressText.width("データ.bin") == 10)
        let fitted = ProgressText.fit("データデータデータデータ.bin", 12)
        #expect(ProgressText.width(fitted) <= 12)
        #expect(fitted.hasSuffix(".bin"))
    }

    @Test func clockAndETA() {
        #expect(ProgressText.clock(7) == "0:07")
        #expect(ProgressText.clock(754) == "12:34")
        #expect(ProgressText.clock(3723) == "1:02:03")
        #expect(ProgressText.eta(remaining: 1000, rate: 100) == "0:10")
        #expect(ProgressText.eta(remaining: 1000, rate: nil) == nil, "no speed yet: no ETA")
        #expect(ProgressText.eta(remaining: 0, rate: nil) == "0:00")
        #expect(ProgressText.percent(50, of: 200) == "25%")
    }

    static func item(_ to: String, size: Int64?) -> PlanItem {
        PlanItem(index: 0, url: "http://127.0.0.1/x", to: to, action: .download, size: size, offset: 0,
                 bytes: size, reason: "")
    }

    /// Whatever the width, a bar line never reaches the last column (so it cannot wrap); with a
    /// size it shows a percentage, without one bytes only (no percent, no ETA).
    @Test(arguments: [20, 40, 60, 80, 132, 250])
    func barLinesFitTheWidth(columns: Int) {
        var board = TransferBoard(entryCount: 3, now: 0)
        _ = board.start(Self.item("out/" + String(repeating: "long-name/", count: 12) + "file.bin", size: 10 << 20), now: 0)
        _ = board.start(Self.item("out/unknown-size.bin", size: nil), now: 0)
        board.progress(EntryKey(kind: .download, index: 0), transferred: 3 << 20, total: 10 << 20, now: 2)
        let block = BarReporter.block(board, columns: columns, rows: 24, now: 2)
        #expect(block.count == 2, "entries with the same index replace each other")
        var wide = TransferBoard(entryCount: 3, now: 0)
        _ = wide.start(Self.item("out/" + String(repeating: "long-name/", count: 12) + "file.bin", size: 10 << 20), now: 0)
        var second = Self.item("out/unknown-size.bin", size: nil)
        second.index = 1
        _ = wide.start(second, now: 0)
        wide.progress(EntryKey(kind: .download, index: 0), transferred: 3 << 20, total: 10 << 20, now: 2)
        wide.progress(EntryKey(kind: .download, index: 1), transferred: 5000, total: nil, now: 2)
        let lines = BarReporter.block(wide, columns: columns, rows: 24, now: 2)
        #expect(lines.count == 3)
        for line in lines { #expect(ProgressText.width(line) < columns, "\(line)") }
        if columns >= 60 {
            #expect(lines[0].contains("30%"))
            #expect(lines[0].contains("3.0 MiB/10.0 MiB"))
            #expect(lines[1].contains("4.9 KiB"))
            #expect(!lines[1].contains("%") && !lines[1].contains("ETA"))
            #expect(lines[2].hasPrefix("  total 0/3 files"))
        }
    }

    /// The objects listed from one `s3://` prefix share its index: `object` keeps them apart, so
    /// each has its row and its own bytes, and each finish counts once.
    @Test func objectsOfOnePrefixAreRowsOfTheirOwn() {
        var board = TransferBoard(entryCount: 2, now: 0)
        var first = Self.item("data/a.bin", size: 10 << 20), second = Self.item("data/b.bin", size: 20 << 20)
        first.object = 0
        second.object = 1
        _ = board.start(first, now: 0)
        _ = board.start(second, now: 0)
        board.progress(EntryKey(kind: .download, index: 0, object: 0), transferred: 5 << 20, total: 10 << 20, now: 1)
        board.progress(EntryKey(kind: .download, index: 0, object: 1), transferred: 5 << 20, total: 20 << 20, now: 1)
        let lines = BarReporter.block(board, columns: 100, rows: 24, now: 1)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].contains("a.bin") && lines[0].contains("50%"), "\(lines[0])")
        #expect(lines[1].contains("b.bin") && lines[1].contains("25%"), "\(lines[1])")
        board.finish(ItemResult(item: first, outcome: .ok, transferred: 10 << 20, seconds: 1, notes: []), now: 2)
        #expect(board.finishedCount == 1)
        #expect(board.entry(second.key)?.item.to == "data/b.bin", "the other object is still running")
    }

    /// More transfers than the window has rows: the rest are counted in one line.
    @Test func manyTransfersAreCounted() {
        var board = TransferBoard(entryCount: 30, now: 0)
        for i in 0..<30 {
            var item = Self.item("out/\(i).bin", size: 100)
            item.index = i
            _ = board.start(item, now: 0)
        }
        let lines = BarReporter.block(board, columns: 80, rows: 10, now: 1)
        #expect(lines.count == 9, "no taller than the window")
        #expect(lines[7] == "  ... and 23 more")
    }

    /// A resume that went back to byte 0 (`EntryNote.startsOver`) counts from 0 of the whole
    /// file: it showed the cached part as in place, and the whole file done once the missing
    /// part's worth of the new stream had come.
    @Test func aResumeThatStartsOverCountsFromByteZero() {
        var board = TransferBoard(entryCount: 1, now: 0)
        var item = Self.item("out/f.bin", size: 1000)
        item.action = .resume
        item.offset = 400
        item.bytes = 600
        _ = board.start(item, now: 0)
        let key = EntryKey(kind: .download, index: 0)
        board.restart(key)
        board.progress(key, transferred: 600, total: 1000, now: 1)
        #expect(board.entry(key)?.done == 600)
        #expect(board.remaining == 400)
        board.progress(key, transferred: 1000, total: 1000, now: 2)
        #expect(board.entry(key)?.done == 1000)
    }

    /// A segmented download that falls back to one stream goes back to byte 0: the bytes the
    /// pieces moved stay in the run's totals (they went back by them until the entry ended,
    /// when its result counted them again), and what is left is the whole file.
    @Test func bytesMovedBeforeAFallbackStayInTheTotals() {
        var board = TransferBoard(entryCount: 1, now: 0)
        let key = EntryKey(kind: .download, index: 0)
        _ = board.start(Self.item("out/f.bin", size: 1000), now: 0)
        board.progress(key, transferred: 700, total: 1000, now: 1)
        board.restart(key)
        #expect(board.moved == 700)
        #expect(board.expected == 1700)
        #expect(board.remaining == 1000)
        #expect(board.entry(key)?.done == 0)
        board.progress(key, transferred: 400, total: 1000, now: 2)
        #expect(board.moved == 1100)
        #expect(board.remaining == 600)
        board.finish(ItemResult(item: Self.item("out/f.bin", size: 1000), outcome: .ok, transferred: 1700, seconds: 3, notes: []), now: 3)
        #expect(board.moved == 1700)
        #expect(board.expected == 1700)
        #expect(board.remaining == 0)
    }

    @Test func summaryCountsPerAction() {
        func result(_ action: Action, _ outcome: ItemResult.Outcome, _ bytes: Int64) -> ItemResult {
            var item = Self.item("out/\(action.rawValue).bin", size: bytes)
            item.action = action
            if action == .upload { item.kind = .upload; item.from = "dist" }
            return ItemResult(item: item, outcome: outcome, transferred: bytes, seconds: 1, notes: [])
        }
        let report = ApplyReport(results: [
            result(.download, .ok, 1 << 20), result(.download, .ok, 1 << 20), result(.resume, .ok, 512),
            result(.upload, .ok, 2048), result(.skip, .skipped, 0), result(.download, .failed(.other(message: "HTTP 404")), 0),
        ], seconds: 2)
        let lines = RunSummary.lines(report)
        #expect(lines == [
            "syncr: 2 downloaded, 1 resumed, 1 uploaded, 1 up to date, 1 failed; 2.0 MiB received, 2.0 KiB sent in 2.0 s (1.0 MiB/s).",
            "  failed: out/download.bin: HTTP 404",
        ])
        let stopped = ApplyReport(results: [result(.download, .ok, 1024), result(.download, .interrupted(.beforeStart), 0),
                                            result(.resume, .interrupted(.whileAsking), 0)], seconds: 1)
        #expect(RunSummary.lines(stopped)
                == ["syncr: 1 downloaded, 0 up to date, 0 failed, 2 interrupted; 1.0 KiB received, 0 B sent in 1.0 s (1.0 KiB/s)."])
        // A failed or interrupted upload's bytes went out, but reached no finished upload: the
        // summary says how much of what was sent that is.
        let unfinished = ApplyReport(results: [
            result(.upload, .ok, 1 << 20), result(.upload, .failed(.changedWhileSending(path: "dist/a")), 3 << 20),
            result(.upload, .interrupted(.upload(resumes: false)), 1 << 20), result(.download, .failed(.other(message: "x")), 1024),
        ], seconds: 1)
        #expect(RunSummary.lines(unfinished)[0]
                == "syncr: 1 uploaded, 0 up to date, 2 failed, 1 interrupted; 1.0 KiB received, "
                + "5.0 MiB sent (4.0 MiB of it by uploads that did not finish) in 1.0 s (5.0 MiB/s).")
    }

    @Test func xmlEscaping() {
        #expect(JUnitReport.escape("a<b>&\"c'\n\u{1}") == "a&lt;b&gt;&amp;&quot;c&apos;&#10;\u{FFFD}")
    }
}
