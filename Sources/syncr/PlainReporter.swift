import SyncrCore
import SyncrLock
import SyncrManifest

/// A progress reporter that can be told the run is over.
protocol RunReporter: ProgressReporter {
    /// Stops any timer and leaves the terminal clean; call before the final summary.
    func finish()
}

/// Writes whole, newline-terminated lines to stderr, nothing relying on carriage returns, so that
/// logs read well in CI and files: a line when an entry starts and when it finishes, and every
/// `interval` a line with files and bytes done, speed and ETA.
final class PlainReporter: RunReporter {
    private let quiet: Bool
    private let lines: EntryLines
    private let state: Locked<State>
    private let ticker = Locked<Ticker?>(nil)

    private struct State {
        var board: TransferBoard
        var lastSummary: (time: Double, moved: Int64)
        var finished = false
    }

    /// - Parameters:
    ///   - quiet: no line at all; the run's summary lists the failures.
    ///   - interval: seconds between summary lines; nil for none.
    init(quiet: Bool, entryCount: Int, interval: Double?, palette: Palette) {
        self.quiet = quiet
        lines = EntryLines(palette: palette, entryCount: entryCount)
        let board = TransferBoard(entryCount: entryCount)
        state = Locked(State(board: board, lastSummary: (board.startedAt, 0)))
        if let interval, !quiet {
            // A strong capture: `finish()` stops the ticker and drops it, which ends the cycle. (A weak
            // one gives the reporter a side table that LeakSanitizer reports as leaked at exit.)
            ticker.withLock { $0 = Ticker(interval: interval) { [self] in summarize() } }
        }
    }

    func report(_ event: ProgressEvent) {
        // Quiet: the summary alone, which lists every failure (a line per failure here as well
        // showed each one twice). The board (names for retry and note lines, the periodic
        // summary) is never read, and keeping it costs a lock and a dictionary update per event.
        if quiet { return }
        let now = Monotonic.now()
        let line: String? = state.withLock { state in
            switch event {
            case .started(let item):
                let number = state.board.start(item, now: now)
                return lines.started(item, number: number)
            case .progress(let index, let transferred, let total, let kind, let object):
                state.board.progress(EntryKey(kind: kind, index: index, object: object), transferred: transferred,
                                     total: total, now: now)
                return nil
            case .retrying(let index, let attempt, let delay, let error, let kind, let object):
                let name = EntryLines.name(EntryKey(kind: kind, index: index, object: object), on: state.board)
                return lines.retrying(name, attempt: attempt, delay: delay, error: error)
            case .note(let index, let note, let kind, let object):
                let key = EntryKey(kind: kind, index: index, object: object)
                if note.startsOver { state.board.restart(key) }
                let name = EntryLines.name(key, on: state.board)
                return lines.note(name, note)
            case .finished(let result):
                // An entry that failed before it could start (its server was not reachable when
                // asked about it) takes its number too: the count would otherwise stop short.
                var started: String?
                if result.status == .failed, state.board.entry(result.item.key) == nil {
                    started = lines.started(result.item, number: state.board.start(result.item, now: now))
                }
                state.board.finish(result, now: now)
                let text = [started, lines.finished(result)].compactMap { $0 }
                return text.isEmpty ? nil : text.joined(separator: "\n")
            }
        }
        if let line { Output.err(line) }
    }

    /// `  progress: 3/10 files, 12.0 MiB of 40.0 MiB, 2.1 MiB/s, ETA 0:15`
    private func summarize() {
        let now = Monotonic.now()
        let line: String? = state.withLock { state in
            let board = state.board
            guard !state.finished, board.finishedCount < board.entryCount else { return nil }
            let moved = board.moved
            let elapsed = now - state.lastSummary.time
            let rate = elapsed > 0 ? Double(moved - state.lastSummary.moved) / elapsed : nil
            state.lastSummary = (now, moved)
            var text = "  progress: \(board.finishedCount)/\(board.entryCount) files, \(ByteSize.format(moved)) of "
                + "\(ByteSize.format(board.expected))\(board.totalIsPartial ? "+" : ""), \(ProgressText.speed(rate))"
            if !board.totalIsPartial, let eta = ProgressText.eta(remaining: board.remaining, rate: rate) {
                text += ", ETA \(eta)"
            }
            return text
        }
        if let line { Output.err(line) }
    }

    func finish() {
        state.withLock { $0.finished = true }
        let ticker = self.ticker.withLock { t -> Ticker? in defer { t = nil }; return t }
        ticker?.stop()
    }
}

/// A reporter for `--progress none`: shows nothing while the run goes on; the final summary
/// still lists every failure.
final class SilentReporter: RunReporter {
    func report(_ event: ProgressEvent) {}
    func finish() {}
}
