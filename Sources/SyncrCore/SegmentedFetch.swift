#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SyncrHTTP
import SyncrManifest

/// Fetches one large file over several parallel Range requests, each writing in place into the
/// preallocated cache file with positional writes.
///
/// A connection that finishes its piece takes over half of the largest piece still running, so
/// one slow connection does not hold up the end of the file. Taking from a running request cuts
/// it short, and what its server already sent past the cut is lost (the bytes in flight: several
/// MiB on a fast path), so a request is cut only when at its pace it has more than `cutAfter`
/// left to run; one already cut costs nothing more to cut again. Durable ranges are recorded
/// at every checkpoint (flush first, then the record), so a crash loses at most one interval.
struct SegmentedFetch: Sendable {
    let download: Download
    let size: Int64
    let validator: String
    let fd: Int32
    let dataPath: String
    let engine: any Transport
    let recorder: EntryRecorder
    let reporter: (any ProgressReporter)?
    let index: Int
    /// The entry's request builder and retry loop, shared with its other strategies.
    let requests: RequestBuilder
    let retrying: Retrying
    /// The file will be flushed: each piece starts the writeback of its bytes as it writes them.
    var writeBack = false
    /// Where the pieces' bytes come from (`Downloader.sameSource`); nil where an ETag settles it.
    var place: SourcePlace?
    var checkpointInterval: Duration = EntryRecorder.interval
    /// No piece smaller than this is split off: below it a new request costs more than it saves.
    var minimumPiece: Int64 = 1 << 20
    /// A request that runs uncut is cut only when at its pace so far it has at least this long
    /// left: a cut costs the bytes in flight and a new request, and saves half of this time.
    var cutAfter: Duration = .seconds(1)
    /// How often an idle connection looks again for a request worth cutting.
    var lookAgain: Duration = .milliseconds(200)

    enum Outcome: Sendable {
        case complete
        /// The server cannot serve this file in pieces after all; start over on one stream.
        case fallback(EntryNote)
    }

    /// Thrown by a worker to stop all of them.
    private struct Fallback: Error { var note: EntryNote }

    private var url: String { download.url.written }

    /// Fetches `missing` (ranges of the file not on disk). Returns the outcome and the bytes
    /// received.
    func run(missing: [Range<Int64>]) async throws -> (Outcome, Int64) {
        let pieces = Self.pieces(missing, count: download.settings.connections, minimum: minimumPiece)
        return try await run(board: Board(pieces: pieces), workers: min(download.settings.connections, pieces.count))
    }

    /// Fetches the rest of the file while the lead request (`lead`, for its first bytes) runs,
    /// shared out so that every connection, the lead's included once its transfer ends well, has
    /// about as much to fetch. Returns when nothing is left worth taking; the lead may still be
    /// finishing its own part. The bytes returned exclude the lead's.
    /// `ended` is fulfilled with the lead's outcome once its transfer ended.
    func help(_ lead: FileSink, ended: OneShot<Result<HTTPResponse, TransferError>>) async throws
        -> (Outcome, Int64) {
        let connections = download.settings.connections
        let board = Board(pieces: Self.shares(of: lead.limit..<size, size: size, count: connections))
        await board.begin(lead)
        let (outcome, transferred) = try await run(board: board, workers: connections - 1,
                                                   joining: (lead, ended))
        return (outcome, transferred - lead.written)
    }

    /// `rest` (the file after the lead's part) cut for `count` connections that each fetch about
    /// `size / count`: whole shares first, and last the smaller one the lead takes when its part
    /// is done (it joins after the others took theirs).
    static func shares(of rest: Range<Int64>, size: Int64, count: Int) -> [Range<Int64>] {
        let share = max(1, size / Int64(count))
        var pieces: [Range<Int64>] = []
        var start = rest.lowerBound
        while start < rest.upperBound {
            let end = pieces.count == count - 1 ? rest.upperBound : min(rest.upperBound, start + share)
            pieces.append(start..<end)
            start = end
        }
        return pieces
    }

    /// Runs `workers` connections over the board; with `joining`, the lead's connection joins
    /// them once its transfer ended well.
    private func run(board: Board, workers: Int,
                     joining lead: (sink: FileSink, ended: OneShot<Result<HTTPResponse, TransferError>>)? = nil)
        async throws
        -> (Outcome, Int64) {
        let ticker = Task { [checkpointInterval, recorder, reporter, index, size, object = download.object] in
            while !Task.isCancelled {
                try? await Task.sleep(for: checkpointInterval)
                if Task.isCancelled { break }
                let (ranges, transferred) = await board.snapshot()
                try? await recorder.checkpoint(ranges, head: nil)
                reporter?.report(.progress(index: index, transferred: transferred, total: size, object: object))
            }
        }
        defer { ticker.cancel() }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<workers {
                    group.addTask { try await self.work(board) }
                }
                if let lead {
                    group.addTask {
                        // Stopping the pieces (a failure, a fallback) stops the lead too.
                        let sink = lead.sink
                        let ended = await withTaskCancellationHandler { await lead.ended.wait() } onCancel: {
                            sink.cancelTransfer()
                        }
                        await board.end(sink, wrote: sink.offset..<(sink.offset + sink.written))
                        if case .success(let response) = ended, response.statusError(url: url) == nil {
                            try await self.work(board)
                        }
                    }
                }
                // The first failure ends the group at once: leaving it cancels the others, the
                // lead's transfer too (`waitForAll` would first wait for each to end on its own,
                // a stalled lead until its timeout).
                for try await _ in group {}
            }
        } catch let fallback as Fallback {
            ticker.cancel()
            _ = await ticker.value
            let (ranges, transferred) = await board.snapshot()
            try? await recorder.checkpoint(ranges, head: nil)
            return (.fallback(fallback.note), transferred)
        } catch {
            ticker.cancel()
            _ = await ticker.value
            // Whatever arrived stays usable for the next run.
            let (ranges, _) = await board.snapshot()
            try? await recorder.checkpoint(ranges, head: nil)
            throw error
        }
        ticker.cancel()
        _ = await ticker.value
        let (ranges, transferred) = await board.snapshot()
        try await recorder.checkpoint(ranges, head: nil)
        return (.complete, transferred)
    }

    /// One connection's loop: take a piece, fetch it (retrying what is left of it), repeat.
    private func work(_ board: Board) async throws {
        while let piece = try await next(board) {
            var start = piece.lowerBound, end = piece.upperBound
            // What the record keeps of a failed piece is told by the entry's own message.
            try await retrying.run(from: start, kept: { _ in 0 }) {
                let range = ByteRange(start: start, end: end - 1)
                let sink = FileSink(fd: fd, offset: start, requestedRange: range, expectedTotal: size,
                                    ifRange: validator, displayURL: url, displayPath: dataPath, writeBack: writeBack,
                                    sameSource: place?.checker)
                await board.begin(sink)
                let outcome = await engine.perform(requests.piece(range: range, ifRange: validator), sink: sink)
                let written = sink.written
                // Leave the board first, so that no split can move the limit after it is read.
                await board.end(sink, wrote: start..<(start + written))
                end = min(end, sink.limit)
                start += written
                if start >= end { return .done(()) }
                return try judge(outcome, reached: start)
            }
        }
    }

    /// The next piece for a connection; waits while a running request may yet be worth cutting.
    private func next(_ board: Board) async throws -> Range<Int64>? {
        while true {
            switch await board.take(minimum: minimumPiece, cutAfter: cutAfter) {
            case .piece(let piece): return piece
            case .none: return nil
            case .wait:
                await board.pause(upTo: lookAgain)
                try Task.checkCancellation()
            }
        }
    }

    /// What a piece's failed answer means: a failure to retry, or a server that cannot serve
    /// pieces after all (every worker stops and the entry falls back to one stream).
    private func judge(_ outcome: Result<HTTPResponse, TransferError>, reached: Int64) throws -> Attempt<Void> {
        let failure: TransferError
        switch outcome {
        case .success(let response):
            failure = response.statusError(url: url)
                ?? .connection(url: url, code: 18, message: "the connection closed after \(reached) of \(size) bytes")
        case .failure(let error):
            failure = error
        }
        switch failure {
        case .rangeNotHonoured:
            throw Fallback(note: .fellBackToOneStream(detail: nil))
        case .invalidResponse(_, let message):
            throw Fallback(note: .fellBackToOneStream(detail: message))
        case .status(_, 416, _, _, _, _):
            // The file ends before this piece: it is not the size the pieces were cut for.
            throw Fallback(note: .fellBackToOneStream(detail: "416 Range Not Satisfiable: the file is shorter than expected"))
        default:
            return .failed(failure, position: reached)
        }
    }

    /// Cuts the missing ranges into about `count` pieces by halving the largest, never below
    /// `minimum` bytes a piece.
    static func pieces(_ missing: [Range<Int64>], count: Int, minimum: Int64) -> [Range<Int64>] {
        var pieces = missing.filter { !$0.isEmpty }
        while pieces.count < count {
            guard let (i, largest) = pieces.enumerated().max(by: { $0.1.count < $1.1.count }),
                  largest.count >= 2 * minimum else { break }
            let middle = largest.lowerBound + Int64(largest.count) / 2
            pieces[i] = largest.lowerBound..<middle
            pieces.insert(middle..<largest.upperBound, at: i + 1)
        }
        return pieces
    }

    /// Makes the cache file as large as the download, so pieces can land anywhere: `fallocate`
    /// where the file system supports it (it also fails early when the disk is too small),
    /// `ftruncate` elsewhere.
    ///
    /// `inMemoryRoom`: the free bytes of the in-memory file system (tmpfs) the file is on. There
    /// `fallocate` zeroes every page before the first request can go out (0.28 s a GiB on the
    /// bench machine), pages the writes take as they land anyway; so the room is checked
    /// instead, and the file only extended.
    static func preallocate(fd: Int32, size: Int64, path: String, inMemoryRoom: Int64? = nil) throws(FileError) {
        var st = stat()
        let known = fstat(fd, &st) == 0
        if known && Int64(st.st_size) >= size { return }
        let reserving = "reserve \(ByteSize.format(size)) for the download"
        if let room = inMemoryRoom {
            let allocated = known ? Int64(st.st_blocks) * 512 : 0
            if room < size - allocated { throw FileError(path: path, operation: reserving, errno: ENOSPC) }
        } else {
            if syncr_fallocate(fd, 0, off_t(size)) == 0 { return }
            if errno == ENOSPC { throw FileError(path: path, operation: reserving, errno: ENOSPC) }
        }
        if ftruncate(fd, off_t(size)) != 0 {
            throw FileError(path: path, operation: "extend the file", errno: errno)
        }
    }
}

/// The pieces still to fetch and the transfers running, shared by the workers of one file.
private actor Board {
    private var pending: [Range<Int64>]
    /// Running transfers and when each joined the board (for its pace).
    private var active: [ObjectIdentifier: (sink: FileSink, began: ContinuousClock.Instant)] = [:]
    private var done: [Range<Int64>] = []
    private var transferredByEnded: Int64 = 0

    init(pieces: [Range<Int64>]) {
        pending = pieces
    }

    /// What a free connection gets.
    enum Take {
        case piece(Range<Int64>)
        /// Nothing yet: a running request may become worth cutting (it slows down or stalls).
        case wait
        /// Nothing left worth taking.
        case none
    }

    /// A pending piece, else the second half of the running transfer with the most left to
    /// fetch: first of those already cut short (cutting one again loses nothing more), then of
    /// one that at its pace has at least `cutAfter` left to run.
    func take(minimum: Int64, cutAfter: Duration) -> Take {
        if !pending.isEmpty { return .piece(pending.removeFirst()) }
        let candidates = active.values.sorted { $0.sink.remaining > $1.sink.remaining }
        for (sink, _) in candidates where sink.isShortened {
            if let piece = Self.half(of: sink, minimum: minimum) { return .piece(piece) }
        }
        let now = ContinuousClock.now
        var mayCutLater = false
        for (sink, began) in candidates where !sink.isShortened && sink.remaining >= 2 * minimum {
            let seconds = (now - began) / .seconds(1)
            let received = sink.received
            mayCutLater = true
            // Its pace over a quarter of `cutAfter` at least: over less, a process still starting
            // its other connections (or a busy machine) makes a fast transfer look slow. With
            // nothing received yet, only a whole `cutAfter` of nothing says it is slow (an answer
            // may be a round trip away).
            let observed = seconds >= cutAfter / .seconds(1) / 4
            let secondsLeft = received > 0 ? (observed ? Double(sink.remaining) * seconds / Double(received) : 0)
                : seconds
            if secondsLeft >= cutAfter / .seconds(1), let piece = Self.half(of: sink, minimum: minimum) {
                return .piece(piece)
            }
        }
        return mayCutLater ? .wait : .none
    }

    private static func half(of sink: FileSink, minimum: Int64) -> Range<Int64>? {
        guard let stolen = sink.split(minimum: minimum), let end = stolen.end else { return nil }
        return stolen.start..<(end + 1)
    }

    /// Connections waiting for a request to become worth cutting.
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    /// Waits `duration`, or less: until a transfer ends, which may leave nothing to wait for.
    func pause(upTo duration: Duration) async {
        let id = nextWaiter
        nextWaiter += 1
        await withCheckedContinuation { continuation in
            waiters[id] = continuation
            Task { [weak self] in
                try? await Task.sleep(for: duration)
                await self?.wake(id)
            }
        }
    }

    private func wake(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }

    func begin(_ sink: FileSink) {
        active[ObjectIdentifier(sink)] = (sink, .now)
    }

    func end(_ sink: FileSink, wrote range: Range<Int64>) {
        let waiting = waiters.values
        waiters = [:]
        waiting.forEach { $0.resume() }
        active[ObjectIdentifier(sink)] = nil
        if !range.isEmpty { done.append(range) }
        transferredByEnded += Int64(range.count)
        // Merge now and then so the list stays short on long runs.
        if done.count > 64 { done = RangeSet(done).ranges }
    }

    /// Every range written so far (ended transfers, and the written prefix of running ones),
    /// and the bytes received.
    func snapshot() -> ([Range<Int64>], Int64) {
        var ranges = done
        var transferred = transferredByEnded
        for (sink, _) in active.values {
            sink.writeHeldBytes()
            let written = sink.written
            if written > 0 { ranges.append(sink.offset..<(sink.offset + written)) }
            transferred += written
        }
        return (ranges, transferred)
    }
}
