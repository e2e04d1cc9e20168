#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP

/// The lead request of a fresh file nobody asked about: its first `leadLength` bytes, on the
/// entry's own task. Most files are whole in its answer, and cost the one request. When the
/// answer shows a file to split, a helper task shares the rest out to the other connections
/// while the lead runs, and the lead's connection joins them when its own part is done.
extension Downloader {
    /// What the other connections did with a lead request's file: its size, the bytes they
    /// received, and why it must fall back to one stream, if it must.
    struct Helped: Sendable {
        var size: Int64
        var received: Int64
        var fallback: EntryNote?
    }

    /// How much the first request for a fresh file of unknown size asks for: all of most small
    /// files, and no more than one connection's share of the smallest file that is split. So the
    /// lead request is never cut short (the bytes a server sent past a cut are paid for and
    /// lost); a file below `min_split` but larger than this costs a second request on the same
    /// connection.
    var leadLength: Int64 {
        let settings = download.settings
        return max(1 << 20, settings.minSplit / Int64(max(1, settings.connections)))
    }

    /// Runs the lead request on this task; the sink's head handler started `helper` if the
    /// answer showed a file to split. Returns the lead's outcome and what the helper did.
    func lead(_ request: HTTPRequest, sink: FileSink, helper: LeadHelper, file: CacheFile, fs: FetchState,
              ticker: CheckpointTicker) async throws -> (Result<HTTPResponse, TransferError>, Helped?) {
        let outcome = await withTaskCancellationHandler {
            await engine.perform(request, sink: sink)
        } onCancel: {
            helper.cancel()
        }
        do {
            let helped = try await helper.finish(with: outcome)
            fs.transferred += helped?.received ?? 0
            return (outcome, helped)
        } catch {
            // The helper stopped the lead before it failed; nothing writes or records now.
            await ticker.stop()
            // No room for the preallocation: the bytes of the first response that no record
            // vouches for are given back.
            if (error as? SyncError)?.isNoRoomToReserve == true, await file.recorder.state.cachedBytes == 0 {
                _ = ftruncate(file.fd, 0)
            }
            throw error
        }
    }

    /// Whether the rest of the lead's file goes to other connections: a 206 for a file of at
    /// least `min_split` bytes that names a validator for the other connections' If-Range.
    /// Asked on the engine thread, from the sink's head handler.
    func leadSplit(_ head: HTTPResponseHead) -> (size: Int64, validator: String)? {
        guard head.status == 206, let size = head.contentRange?.total, size >= download.settings.minSplit,
              size > leadLength,
              let validator = RemoteResource(head: head, method: "GET").ifRangeValidator else { return nil }
        return (size, validator)
    }

    /// The helper's work: records the version, reserves the file's room, and fetches the rest
    /// in pieces beside the lead. Stops the lead when the pieces cannot go on (a fallback, a
    /// failure), so that the entry's task, waiting for the lead, goes on at once.
    func share(_ split: (size: Int64, validator: String), head: HTTPResponseHead, lead sink: FileSink,
               ended: OneShot<Result<HTTPResponse, TransferError>>, file: CacheFile) async throws -> Helped {
        do {
            let recorder = file.recorder
            await recorder.adopt(head)
            try await recorder.update { _ in }
            try await preallocate(fd: file.fd, size: split.size, dataPath: file.path, recorder: recorder)
            let fetch = await pieces(file, size: split.size, validator: split.validator, lead: head.effectiveURL)
            let (outcome, received) = try await fetch.help(sink, ended: ended)
            if case .fallback(let note) = outcome {
                sink.cancelTransfer()
                return Helped(size: split.size, received: received, fallback: note)
            }
            return Helped(size: split.size, received: received)
        } catch {
            sink.cancelTransfer()
            throw error
        }
    }

    /// After a shared-out lead: the lead's own part is recorded; whatever no connection
    /// finished is fetched in pieces again, with the usual retries.
    func finishHelped(_ helped: Helped, sink: FileSink, file: CacheFile, fs: FetchState) async throws -> Attempt<Void> {
        let recorder = file.recorder
        fs.transferred += sink.written
        if sink.written > 0 { try await recorder.checkpoint([0..<sink.written], head: sink.head) }
        var fallback = helped.fallback
        if fallback == nil {
            let gaps = await recorder.state.ranges.gaps(upTo: helped.size)
            if !gaps.isEmpty {
                let validator = await recorder.state.ifRangeValidator ?? ""
                let (outcome, received) = try await pieces(file, size: helped.size, validator: validator)
                    .run(missing: gaps)
                fs.transferred += received
                if case .fallback(let note) = outcome { fallback = note }
            }
        }
        if let fallback {
            try await startOver(file, fs, fallback)
            return .again
        }
        fs.offset = helped.size
        return .done(())
    }
}
