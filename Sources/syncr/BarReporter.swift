import SyncrCore
import SyncrLock
import SyncrManifest

/// Draws progress on a terminal: one line per active transfer (name, percent, bytes done/total,
/// speed, ETA) and a total line, redrawn in place.
///
/// Events only change state; a ticker thread draws, at most 10 times a second by `clock` (a
/// frame sooner than that after the last is skipped), in one write(2) per frame that moves to the top of the block, prints the lines to keep (finished entries,
/// failures, retries, notes) and overwrites the block line by line (erasing each line's rest
/// rather than the whole block first, so nothing flickers). Lines are fitted to the width asked
/// each frame, so a resized window is followed.
final class BarReporter: RunReporter {
    private let quiet: Bool
    private let lines: EntryLines
    private let state: Locked<State>
    private let ticker = Locked<Ticker?>(nil)
    /// Seconds on a clock that never goes back; tests inject one to check the frame cap.
    private let clock: @Sendable () -> Double
    /// Where frames go: stderr, or a test's buffer.
    private let output: @Sendable (String) -> Void
    /// Frames per second at most.
    static let framesPerSecond = 10.0

    private struct State {
        var board: TransferBoard
        /// Lines to print above the block at the next frame.
        var pending: [String] = []
        /// Lines the block on screen has (the cursor is at the end of the last one).
        var drawn = 0
        var lastBlock: [String] = []
        /// When the last frame was drawn, on `clock`.
        var lastFrame = -Double.infinity
        var finished = false
    }

    /// - Parameters:
    ///   - clock: the time frames are spaced by (tests pass their own).
    ///   - output: where frames are written (tests pass their own).
    ///   - ticking: whether a ticker thread calls `draw()` (tests call it themselves).
    init(quiet: Bool, entryCount: Int, palette: Palette, clock: @escaping @Sendable () -> Double = Monotonic.now,
         output: @escaping @Sendable (String) -> Void = Output.raw, ticking: Bool = true) {
        self.quiet = quiet
        self.clock = clock
        self.output = output
        lines = EntryLines(palette: palette, entryCount: entryCount)
        state = Locked(State(board: TransferBoard(entryCount: entryCount, now: clock())))
        TerminalBar.hideCursor(colour: palette.enabled)
        // A strong capture: `finish()` stops the ticker and drops it, which ends the cycle. (A weak
        // one gives the reporter a side table that LeakSanitizer reports as leaked at exit.)
        if ticking { ticker.withLock { $0 = Ticker(interval: 1 / Self.framesPerSecond) { [self] in draw() } } }
    }

    func report(_ event: ProgressEvent) {
        let now = clock()
        let direct: String? = state.withLock { state in
            var line: String?
            switch event {
            case .started(let item):
                // The bar shows it; no line.
                _ = state.board.start(item, now: now)
            case .progress(let index, let transferred, let total, let kind, let object):
                state.board.progress(EntryKey(kind: kind, index: index, object: object), transferred: transferred,
                                     total: total, now: now)
            case .retrying(let index, let attempt, let delay, let error, let kind, let object):
                let name = EntryLines.name(EntryKey(kind: kind, index: index, object: object), on: state.board)
                if !quiet { line = lines.retrying(name, attempt: attempt, delay: delay, error: error) }
            case .note(let index, let note, let kind, let object):
                let key = EntryKey(kind: kind, index: index, object: object)
                if note.startsOver { state.board.restart(key) }
                let name = EntryLines.name(key, on: state.board)
                if !quiet { line = lines.note(name, note) }
            case .finished(let result):
                state.board.finish(result, now: now)
                if !quiet { line = lines.finished(result) }
            }
            // Once the bar is gone (Ctrl-C), lines go straight out: no frame would carry them.
            if state.finished { return line }
            if let line { state.pending.append(line) }
            return nil
        }
        if let direct { Output.err(direct) }
    }

    /// One frame, written only if something changed and the last is at least a frame's time ago.
    func draw() {
        let size = TerminalInfo.size() ?? (80, 24)
        let now = clock()
        let text: String? = state.withLock { state in
            guard !state.finished, now - state.lastFrame >= 1 / Self.framesPerSecond else { return nil }
            let block = Self.block(state.board, columns: size.columns, rows: size.rows, now: now)
            guard !state.pending.isEmpty || block != state.lastBlock else { return nil }
            var out = Self.toTop(state.drawn)
            for line in state.pending { out += line + "\u{1B}[K\n" }
            out += block.joined(separator: "\u{1B}[K\n") + "\u{1B}[K\u{1B}[J"
            state.pending = []
            state.drawn = block.count
            state.lastBlock = block
            state.lastFrame = now
            return out
        }
        if let text { output(text) }
    }

    /// Erases the block, prints what is left to print, and shows the cursor again.
    func finish() {
        let ticker = self.ticker.withLock { t -> Ticker? in defer { t = nil }; return t }
        ticker?.stop()
        let text: String = state.withLock { state in
            guard !state.finished else { return "" }
            state.finished = true
            var out = state.drawn > 0 ? Self.toTop(state.drawn) + "\u{1B}[J" : ""
            for line in state.pending { out += line + "\n" }
            state.pending = []
            state.drawn = 0
            return out
        }
        if !text.isEmpty { output(text) }
        TerminalBar.showCursor()
    }

    /// From the end of a block of `lines` lines to the start of its first.
    private static func toTop(_ lines: Int) -> String {
        guard lines > 0 else { return "" }
        return "\r" + (lines > 1 ? "\u{1B}[\(lines - 1)A" : "")
    }

    /// The block: one line per active entry (as many as fit the window) and the total line,
    /// each shorter than the width so that no line wraps and the cursor arithmetic holds.
    static func block(_ board: TransferBoard, columns: Int, rows: Int, now: Double) -> [String] {
        let width = max(20, columns) - 1
        var out: [String] = []
        let room = max(1, min(rows - 2, 40))
        let shown = board.active.count <= room ? board.active.count : room - 1
        for entry in board.active.prefix(shown) {
            out.append(line(entry, width: width, now: now))
        }
        if shown < board.active.count {
            out.append(ProgressText.clip("  ... and \(board.active.count - shown) more", width))
        }
        out.append(totalLine(board, width: width, now: now))
        return out
    }

    /// `  out/big.iso      42%  [========>           ]  1.2 GiB/2.9 GiB  41.0 MiB/s  ETA 0:43`
    static func line(_ entry: ActiveEntry, width: Int, now: Double) -> String {
        let rate = entry.meter.rate(at: now)
        var fields: [String] = []
        var graph: String?
        if let size = entry.size {
            fields.append(ProgressText.pad(ProgressText.percent(entry.done, of: size), 4))
            fields.append("\(ByteSize.format(entry.done))/\(ByteSize.format(size))")
            let cells = 20
            let filled = size > 0 ? Int(Double(entry.done) / Double(size) * Double(cells)) : cells
            graph = "[" + String(repeating: "=", count: filled) + (filled < cells ? ">" : "")
                + String(repeating: " ", count: max(0, cells - filled - 1)) + "]"
        } else {
            fields.append(ByteSize.format(entry.done))
        }
        fields.append(ProgressText.speed(rate))
        if let size = entry.size, let eta = ProgressText.eta(remaining: size - entry.done, rate: rate) {
            fields.append("ETA \(eta)")
        }
        let name = Rendering.printable(entry.item.kind == .upload ? "upload \(entry.item.from ?? entry.item.url)" : entry.item.to)
        // Drop what does not fit, least telling first: the graph, the ETA, the speed.
        var candidates: [[String]] = []
        if let graph { candidates.append([fields[0], graph] + fields.dropFirst()) }
        candidates.append(fields)
        if fields.count > 2 { candidates.append(Array(fields.prefix(2))) }
        candidates.append(Array(fields.prefix(1)))
        for candidate in candidates {
            let right = candidate.joined(separator: "  ")
            let nameRoom = width - 2 - 2 - ProgressText.width(right)
            if nameRoom >= min(24, ProgressText.width(name)) || candidate.count == 1 {
                let fitted = ProgressText.fit(name, max(0, nameRoom))
                return ProgressText.clip("  " + ProgressText.pad(fitted, max(0, nameRoom)) + "  " + right, width)
            }
        }
        return ProgressText.clip("  " + name, width)
    }

    /// `  total 3/10 files  45.0 MiB/120.0 MiB+  8.2 MiB/s  ETA 0:09`
    static func totalLine(_ board: TransferBoard, width: Int, now: Double) -> String {
        let rate = board.meter.rate(at: now)
        var files = "total \(board.finishedCount)/\(board.entryCount) files"
        if board.failedCount > 0 { files += " (\(board.failedCount) failed)" }
        var fields = [files, "\(ByteSize.format(board.moved))/\(ByteSize.format(board.expected))\(board.totalIsPartial ? "+" : "")",
                      ProgressText.speed(rate)]
        if !board.totalIsPartial, let eta = ProgressText.eta(remaining: board.remaining, rate: rate) {
            fields.append("ETA \(eta)")
        }
        // Drop whole fields from the end rather than cut one in the middle.
        while fields.count > 1, ProgressText.width("  " + fields.joined(separator: "  ")) > width { fields.removeLast() }
        return ProgressText.clip("  " + fields.joined(separator: "  "), width)
    }
}
