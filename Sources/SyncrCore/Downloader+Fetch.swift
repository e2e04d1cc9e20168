#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrHTTP
import SyncrManifest

/// Where one entry's fetch stands, shared by its strategies and across its attempts. Used by
/// the entry's own task only.
final class FetchState {
    /// Bytes from 0 that are in the cache file and belong to the version being fetched.
    var offset: Int64
    /// Cleared when the server showed it cannot continue a partial file; from then on every
    /// attempt starts at byte 0.
    var canResume = true
    /// Whether the lead request (the first `leadLength` bytes) was made (it is made once).
    var leadTried = false
    /// Bytes received over the network in this run.
    var transferred: Int64 = 0
    /// Bytes from 0 the cache file held when this run began, or 0 once it started over: a
    /// single stream's progress counts from there (`ProgressEvent.progress`).
    var keptAtStart: Int64
    /// The file's size as an answer told it, for a file nobody asked about first: the report
    /// gives it also when a later stage fails (a checksum mismatch).
    var size: Int64?
    /// What the operator should know about this entry.
    var notes: [EntryNote] = []
    /// An answer showed that the server serves no ranges (a 200 without `Accept-Ranges:
    /// bytes`): what is kept will not be resumed (`Planner.decide` restarts it).
    var rangesRefused = false
    /// The download went back to byte 0 (a note that `startsOver`): a planned resume is then
    /// a restart in the result.
    var startedOver: Bool { notes.contains { $0.startsOver } }

    init(offset: Int64) {
        self.offset = offset
        keptAtStart = offset
    }
}

/// The fetch stage: the missing bytes of the file into the cache file. A large file from a
/// server that allows ranges goes in parallel pieces; otherwise one stream, which for a fresh
/// file nobody asked about starts with a request for its first bytes, and the rest goes to
/// other connections once the answer shows a larger file. Every attempt runs through `Retrying`.
extension Downloader {
    func fetch(_ file: CacheFile, _ fs: FetchState) async throws {
        do {
            if let plan = segmentation(state: await file.recorder.state) {
                try await fetchInPieces(file, fs, size: plan.size, validator: plan.validator)
                // Complete: on to the flush and the move, even if the run is being interrupted.
                if fs.offset == plan.size { return }
            }
            try await retrying.run(from: fs.offset) {
                try await streamAttempt(file, fs)
            }
        } catch let error as SyncError {
            // A full disk under parallel pieces (those of a split lead too) is said as on one
            // stream: what is kept, and to free room and run again, not a bare "cannot write".
            if case .transferIO(_, let code, _, _) = error, Self.isSpaceError(code) {
                throw spaceFailure(code, kept: cache.loadState(key)?.cachedBytes ?? 0)
            }
            // The bytes kept are worth a resume only where the next plan will resume them.
            if error.retries?.kept ?? 0 > 0, !resumes(await file.recorder.state, fs) {
                throw error.changingRetries { $0.resumes = false }
            }
            throw error
        }
    }

    /// Whether to fetch in parallel pieces, and with which validator: only a file of at least
    /// `min_split` bytes, from a server that accepts ranges and gives a validator for If-Range.
    func segmentation(state: EntryState) -> (size: Int64, validator: String)? {
        let settings = download.settings
        guard settings.connections > 1, let remote = item.remote, remote.acceptsRanges,
              let size = remote.size, size >= settings.minSplit else { return nil }
        if state.cachedBytes > 0 {
            guard state.size == size, let validator = state.ifRangeValidator else { return nil }
            return (size, validator)
        }
        guard let validator = remote.ifRangeValidator else { return nil }
        return (size, validator)
    }

    /// The segmented strategy: what the record lacks, over up to `connections` Range requests.
    /// A server that turns out not to serve pieces leaves the stream to start over from 0.
    private func fetchInPieces(_ file: CacheFile, _ fs: FetchState, size: Int64, validator: String) async throws {
        let recorder = file.recorder
        if await recorder.state.cachedBytes == 0, let remote = item.remote {
            // The record names the version before any of its bytes are counted.
            try await recorder.update {
                $0.size = remote.size
                $0.etag = remote.etag
                $0.lastModified = remote.lastModified
                $0.finalURL = redactor.scrubLocation(remote.finalURL)
            }
        }
        do {
            try await preallocate(fd: file.fd, size: size, dataPath: file.path, recorder: recorder)
        } catch let error as SyncError where error.isNoRoomToReserve {
            // What a failed preallocation took, no record vouches for: give it back.
            if await recorder.state.cachedBytes == 0 { _ = ftruncate(file.fd, 0) }
            throw error
        }
        let missing = await recorder.state.ranges.gaps(upTo: size)
        let fetch = await pieces(file, size: size, validator: validator)
        let (outcome, received): (SegmentedFetch.Outcome, Int64)
        do {
            (outcome, received) = try await fetch.run(missing: missing)
        } catch {
            await remember(fetch.place, in: recorder)
            throw error
        }
        await remember(fetch.place, in: recorder)
        fs.transferred += received
        switch outcome {
        case .complete:
            fs.offset = size
        case .fallback(let note):
            try await startOver(file, fs, note)
        }
    }

    /// The fetcher of parallel pieces of this entry's file.
    /// - Parameter lead: where the lead request's bytes came from, when it is the lead's file the
    ///   pieces share out.
    func pieces(_ file: CacheFile, size: Int64, validator: String, lead: String? = nil) async -> SegmentedFetch {
        var fetch = SegmentedFetch(download: download, size: size, validator: validator, fd: file.fd, dataPath: file.path,
                                   engine: engine, recorder: file.recorder, reporter: reporter, index: item.index,
                                   requests: requests, retrying: retrying)
        fetch.writeBack = cache.flushesFiles
        fetch.place = sameSource(await file.recorder.state, lead: lead)
        return fetch
    }

    /// For requests that continue bytes which only a date vouches for (no strong ETag): whether
    /// an answer's URL after redirects is where those bytes came from. A redirect that leads to
    /// another file of the same size and date (a "latest" link that moved on, a redirector that
    /// alternates) would otherwise have its bytes joined to the first's. The place is the one
    /// of the bytes the record vouches for (an earlier run's GETs), else the lead's, else the
    /// first answer's: a HEAD's place is never held against a GET's, since servers may send
    /// the two elsewhere. Nil where an ETag settles it (If-Range).
    func sameSource(_ state: EntryState, lead: String? = nil) -> SourcePlace? {
        guard state.etag == nil else { return nil }
        return SourcePlace(state.cachedBytes > 0 ? state.finalURL : lead.map(redactor.scrubLocation), redactor: redactor)
    }

    /// Records where the pieces' bytes came from (the place `SourcePlace` settled on), so that
    /// a later run's resume is held to the place of GETs, not of the plan's HEAD.
    func remember(_ place: SourcePlace?, in recorder: EntryRecorder) async {
        guard let reached = place?.settled, await recorder.state.finalURL != reached else { return }
        try? await recorder.update(durable: false) { $0.finalURL = reached }
    }

    /// Whether the next run goes on from what `state` keeps, as the next plan decides: a
    /// complete file is placed from the cache; a partial one is resumed against a validator
    /// (`EntryState.resumable`) from a server that serves ranges. The messages that say what
    /// is kept ask this.
    func resumes(_ state: EntryState, _ fs: FetchState) -> Bool {
        state.complete || (state.resumable && !fs.rangesRefused && item.remote?.acceptsRanges != false)
    }

    /// From now on every attempt starts at byte 0: the record goes first, then the bytes.
    func startOver(_ file: CacheFile, _ fs: FetchState, _ why: EntryNote) async throws {
        note(fs, why)
        fs.canResume = false
        try await file.recorder.reset()
        fs.offset = 0
    }

    func note(_ fs: FetchState, _ note: EntryNote) {
        fs.notes.append(note)
        if note.startsOver { fs.keptAtStart = 0 }
        reporter?.report(.note(index: item.index, note: note, object: item.object))
    }

    /// One attempt on one stream, from `fs.offset` to the end.
    private func streamAttempt(_ file: CacheFile, _ fs: FetchState) async throws -> Attempt<Void> {
        let recorder = file.recorder
        var state = await recorder.state
        if let total = state.size, fs.offset >= total, fs.offset > 0 { return .done(()) }
        if fs.offset > 0 && (!fs.canResume || state.ifRangeValidator == nil) {
            if fs.canResume {
                note(fs, .noValidatorToResume)
                fs.canResume = false
            }
            try await recorder.reset()
            fs.offset = 0
            state = await recorder.state
        } else if fs.offset == 0 && state.cachedBytes > 0 {
            // Kept pieces with nothing from byte 0 (a split download's, now fetched on one
            // stream): this GET has no If-Range, so its answer may be another version, and the
            // record would vouch for the old pieces under the new validators.
            try await recorder.reset()
            state = await recorder.state
        }
        // A fresh file no one asked the server about (apply skips the HEAD for those): ask for
        // its first `leadLength` bytes, so that the answer says at once whether ranges work and
        // how large the file is; the rest of a larger one is then shared out to the other
        // connections while this one runs.
        let leading = fs.offset == 0 && item.remote == nil && fs.canResume && !fs.leadTried
            && download.settings.connections > 1
        fs.leadTried = fs.leadTried || leading
        let base = fs.offset, keptAtStart = fs.keptAtStart
        let range = base > 0 ? ByteRange(start: base) : (leading ? ByteRange(start: 0, end: leadLength - 1) : nil)
        let ifRange = base > 0 ? state.ifRangeValidator : nil
        let request = requests.get(range: range, ifRange: ifRange)
        let helper = LeadHelper()
        let ticker = CheckpointTicker()
        let sink = FileSink(fd: file.fd, offset: base, requestedRange: range,
                            expectedTotal: base > 0 ? state.size : nil, ifRange: ifRange, displayURL: url,
                            displayPath: file.path, wholeFileAllowed: leading,
                            writeBack: cache.flushesFiles, onResponse: { [self] head, sink in
            // An answer that shows a file to split starts the connections that share it out.
            if leading, let split = leadSplit(head) {
                helper.start { try await share(split, head: head, lead: sink, ended: helper.ended, file: file) }
            }
            // A body that fits in one of the sink's writes arrives whole before a checkpoint
            // could help: most small files need no ticker (a task and a timer each).
            if (head.contentLength ?? Int64.max) > Int64(FileSink.coalesce) {
                ticker.start { checkpoints(sink, base: base, counted: max(0, base - keptAtStart), recorder: recorder) }
            }
        }, sameSource: base > 0 ? sameSource(state)?.checker : nil)
        let outcome: Result<HTTPResponse, TransferError>
        var helped: Helped?
        if leading {
            (outcome, helped) = try await lead(request, sink: sink, helper: helper, file: file, fs: fs,
                                               ticker: ticker)
        } else {
            outcome = await engine.perform(request, sink: sink)
        }
        await ticker.stop()
        if let head = sink.head, head.status == 200, !head.acceptsByteRanges { fs.rangesRefused = true }
        if let helped { return try await finishHelped(helped, sink: sink, file: file, fs: fs) }
        return try await judge(outcome, sink: sink, base: base, file: file, fs: fs)
    }

    /// Makes a stream's progress durable every `checkpointInterval` while it runs, and reports
    /// it: `counted` is what this run received before this attempt (a retry's stream counts on
    /// from there; it said 0 again).
    private func checkpoints(_ sink: FileSink, base: Int64, counted: Int64, recorder: EntryRecorder) -> Task<Void, Never> {
        Task { [checkpointInterval, reporter, index = item.index, object = item.object] in
            while !Task.isCancelled {
                try? await Task.sleep(for: checkpointInterval)
                if Task.isCancelled { break }
                sink.writeHeldBytes()
                let written = sink.written
                if written > 0 {
                    try? await recorder.checkpoint(good: base + written, head: sink.head)
                    reporter?.report(.progress(index: index, transferred: counted + written, total: sink.head?.resourceSize,
                                               object: object))
                }
            }
        }
    }

    /// What a single stream's answer means: done, start over, or a failure for the retry loop.
    /// Bytes that arrived before a failure are kept (flushed, then recorded).
    private func judge(_ outcome: Result<HTTPResponse, TransferError>, sink: FileSink, base: Int64,
                       file: CacheFile, fs: FetchState) async throws -> Attempt<Void> {
        let recorder = file.recorder
        let written = sink.written
        fs.transferred += written
        fs.offset = base + written
        var failure: TransferError?
        switch outcome {
        case .success(let response):
            if let statusError = response.statusError(url: url) {
                failure = statusError
            } else {
                await recorder.adopt(response.head)
                fs.size = await recorder.state.size
                if fs.size == nil, response.head.status == 200, let planned = plannedSize(of: response.head) {
                    await recorder.learn(size: planned)
                    fs.size = planned
                }
                if let total = fs.size, fs.offset < total {
                    failure = .connection(url: url, code: 18,
                                          message: "the connection closed after \(fs.offset) of \(total) bytes")
                }
            }
        case .failure(let error):
            failure = error
        }
        // The lead got all it asked for: of a file below `min_split` (the size it gave is
        // larger), or of one whose size it did not give (`Content-Range: bytes 0-N/*`, which
        // RFC 9110 allows), where only asking for the rest tells whether there is more. The
        // rest follows on the same stream (its checkpoints record the lead's bytes too).
        let leadFilled = base == 0 && sink.requestedRange?.end != nil && fs.offset == sink.limit
            && sink.head?.status == 206
        if let failure {
            if leadFilled { return try await continueAfterLead(file, fs) }
            return try await judgeFailure(failure, sink: sink, base: base, written: written, file: file, fs: fs)
        }
        if leadFilled, await recorder.state.size == nil { return try await continueAfterLead(file, fs) }
        await recorder.remember(0..<fs.offset, head: sink.head)
        return .done(())
    }

    /// The size the plan's question gave for the version an answer without a length is of (a
    /// body that ends when the server closes the connection): without it, a connection cut
    /// short passed as the whole file, and was put in place. Nil where the answer names
    /// another version, or neither names one (nothing then ties the two together).
    private func plannedSize(of head: HTTPResponseHead) -> Int64? {
        guard let remote = item.remote, let size = remote.size else { return nil }
        if let etag = remote.etag { return head.etag == etag ? size : nil }
        if let date = remote.lastModified { return head.lastModified == date ? size : nil }
        return nil
    }

    /// The rest of a file after its lead's bytes, asked for against the lead's validator;
    /// without one, one stream from byte 0.
    private func continueAfterLead(_ file: CacheFile, _ fs: FetchState) async throws -> Attempt<Void> {
        if await file.recorder.state.ifRangeValidator != nil { return .again }
        try await startOver(file, fs, .noValidatorForTheRest)
        return .again
    }

    /// What a stream's failure means: kept bytes, and whether to start over or retry.
    private func judgeFailure(_ failure: TransferError, sink: FileSink, base: Int64, written: Int64,
                              file: CacheFile, fs: FetchState) async throws -> Attempt<Void> {
        let recorder = file.recorder
        if written > 0 {
            fs.offset = try await keep(good: fs.offset, head: sink.head, fd: file.fd, recorder: recorder)
        }
        if case .local(_, let code, _) = failure, Self.isSpaceError(code) {
            // What the next run resumes from is what the record on disk vouches for: on a full
            // disk the record itself may not have been written.
            throw spaceFailure(code, kept: min(fs.offset, cache.loadState(key)?.good ?? 0))
        }
        switch failure {
        case .rangeNotHonoured:
            // RFC 9110 lets a server ignore Range; its 200 body starts at byte 0 and must
            // never be appended to the bytes we have.
            fs.canResume = false
            note(fs, .rangeIgnored)
            return .again
        case .invalidResponse(_, let message) where base > 0 && fs.canResume:
            fs.canResume = false
            note(fs, .resumeDidNotFit(detail: message))
            return .again
        case .status(_, 416, _, _, _, _) where base == 0 && sink.requestedRange != nil && fs.leadTried && fs.canResume:
            // The lead asked for the first bytes of a file that has none: an empty file has no
            // range to give (RFC 9110 §14.1.1; S3 answers InvalidRange). A plain GET fetches it.
            fs.canResume = false
            return .again
        case .status(_, 416, _, _, _, _) where base > 0 && fs.canResume:
            // The same version (If-Range held), yet it ends before the bytes we have: they cannot
            // be trusted, and asking again would get the same answer.
            fs.canResume = false
            note(fs, .resumePastTheEnd)
            return .again
        default:
            return .failed(failure, position: fs.offset)
        }
    }
}
