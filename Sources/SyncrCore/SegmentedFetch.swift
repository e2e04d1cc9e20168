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
/// one slow connection does not hold up the end of the file. Durable ranges are recorded at
/// every checkpoint (flush first, then the record), so a crash loses at most one interval.
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
    var checkpointInterval: Duration = EntryRecorder.interval
    /// No piece smaller than this is split off: below it a new request costs more than it saves.
    var minimumPiece: Int64 = 1 << 20

    enum Outcome: Sendable {
        case complete
        /// The server cannot serve this file in pieces after all; start over on one stream.
        case fallback(reason: String)
    }

    /// Thrown by a worker to stop all of them.
    private struct Fallback: Error { var reason: String }

    private var url: String { download.url.written }

    /// Fetches `missing` (ranges of the file not on disk). Returns the outcome and the bytes
    /// received.
    func run(missing: [Range<Int64>]) async throws -> (Outcome, Int64) {
        let pieces = Self.pieces(missing, count: download.settings.connections, minimum: minimumPiece)
        return try await run(board: Board(pieces: pieces), workers: min(download.settings.connections, pieces.count))
    }

    /// Helps a transfer already under way (`lead`, bounded to the file's size): the other
    /// connections split its remainder between them. Returns when nothing is left worth taking;
    /// the lead may still be finishing its own part. The bytes returned exclude the lead's.
    func help(_ lead: FileSink) async throws -> (Outcome, Int64) {
        let board = Board(pieces: [])
        await board.begin(lead)
        let (outcome, transferred) = try await run(board: board, workers: download.settings.connections - 1)
        return (outcome, transferred - lead.written)
    }

    private func run(board: Board, workers: Int) async throws -> (Outcome, Int64) {
        let ticker = Task { [checkpointInterval, recorder, reporter, index, size] in
            while !Task.isCancelled {
                try? await Task.sleep(for: checkpointInterval)
                if Task.isCancelled { break }
                let (ranges, transferred) = await board.snapshot()
                try? await recorder.checkpoint(ranges, head: nil)
                reporter?.report(.progress(index: index, transferred: transferred, total: size))
            }
        }
        defer { ticker.cancel() }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<workers {
                    group.addTask { try await self.work(board) }
                }
                try await group.waitForAll()
            }
        } catch let fallback as Fallback {
            ticker.cancel()
            _ = await ticker.value
            let (ranges, transferred) = await board.snapshot()
            try? await recorder.checkpoint(ranges, head: nil)
            return (.fallback(reason: fallback.reason), transferred)
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
        while let piece = await board.take(minimum: minimumPiece) {
            var start = piece.lowerBound, end = piece.upperBound
            // What the record keeps of a failed piece is told by the entry's own message.
            try await retrying.run(from: start, kept: { _ in 0 }) {
                let range = ByteRange(start: start, end: end - 1)
                let sink = FileSink(fd: fd, offset: start, requestedRange: range, expectedTotal: size,
                                    ifRange: validator, displayURL: url, displayPath: dataPath)
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
            throw Fallback(reason: "the server answered a Range request with the whole file")
        case .invalidResponse(_, let message):
            throw Fallback(reason: "a Range answer did not fit (\(message))")
        case .status(_, 416, _, _):
            // The file ends before this piece: it is not the size the pieces were cut for.
            throw Fallback(reason: "a Range request was answered 416 Range Not Satisfiable (the file is shorter than expected)")
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
    static func preallocate(fd: Int32, size: Int64, path: String) throws(FileError) {
        var st = stat()
        if fstat(fd, &st) == 0 && Int64(st.st_size) >= size { return }
        if syncr_fallocate(fd, 0, off_t(size)) == 0 { return }
        let code = errno
        if code == ENOSPC {
            throw FileError(path: path, operation: "reserve \(ByteSize.format(size)) for the download", errno: code)
        }
        if ftruncate(fd, off_t(size)) != 0 {
            throw FileError(path: path, operation: "extend the file", errno: errno)
        }
    }
}

/// The pieces still to fetch and the transfers running, shared by the workers of one file.
private actor Board {
    private var pending: [Range<Int64>]
    private var active: [ObjectIdentifier: FileSink] = [:]
    private var done: [Range<Int64>] = []
    private var transferredByEnded: Int64 = 0

    init(pieces: [Range<Int64>]) {
        pending = pieces
    }


    /// The next piece: a pending one, else the second half of the running transfer with the
    /// most left to fetch; nil when there is nothing left worth taking.
    func take(minimum: Int64) -> Range<Int64>? {
        if !pending.isEmpty { return pending.removeFirst() }
        let candidates = active.values.sorted { $0.remaining > $1.remaining }
        for sink in candidates {
            if let stolen = sink.split(minimum: minimum), let end = stolen.end {
                return stolen.start..<(end + 1)
            }
        }
        return nil
    }

    func begin(_ sink: FileSink) {
        active[ObjectIdentifier(sink)] = sink
    }

    func end(_ sink: FileSink, wrote range: Range<Int64>) {
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
        for sink in active.values {
            sink.writeHeldBytes()
            let written = sink.written
            if written > 0 { ranges.append(sink.offset..<(sink.offset + written)) }
            transferred += written
        }
        return (ranges, transferred)
    }
}
