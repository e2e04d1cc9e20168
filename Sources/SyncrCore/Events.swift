/// What happens during a run, for whoever shows progress. Delivered from many tasks at once,
/// with secrets masked. `kind` and `index` name the entry (`index` counts in `downloads:` or
/// `uploads:`, as `kind` says); `object` tells apart the objects listed from one `s3://` prefix
/// entry, as `PlanItem.object` does.
public enum ProgressEvent: Sendable, Equatable {
    /// An entry starts transferring (a download once it has one of the `jobs` network slots).
    case started(item: PlanItem)
    /// Bytes moved for an entry (a running total for this run, which never goes down): received
    /// and kept for a download (over all its connections and attempts), sent for an upload;
    /// `total` when known, the file's whole size. A resumed download had the `.started` item's
    /// `size - bytes` before this run, until a `.note` that `startsOver`: from then on the file
    /// counts from byte 0, and so does `transferred`. Sent every half second while bytes flow:
    /// a file done sooner has none.
    case progress(index: Int, transferred: Int64, total: Int64?, kind: EntryKind = .download, object: Int? = nil)
    /// Attempt `attempt` failed with `error` (whose `retries.stop` is nil) and will be retried
    /// after `delay` seconds.
    case retrying(index: Int, attempt: Int, delay: Double, error: SyncError, kind: EntryKind = .download,
                  object: Int? = nil)
    /// Something the operator should know that does not fail the entry (e.g. the server ignored
    /// Range and the download restarted from byte 0).
    case note(index: Int, note: EntryNote, kind: EntryKind = .download, object: Int? = nil)
    /// An entry is done, one way or the other.
    case finished(result: ItemResult)
}

/// Receives progress events.
public protocol ProgressReporter: Sendable {
    /// Called for every event, from many tasks at once: return quickly.
    func report(_ event: ProgressEvent)
}

/// A progress reporter made of a closure: what a library caller passes to `Session.apply`.
public struct ProgressHandler: ProgressReporter {
    private let handle: @Sendable (ProgressEvent) -> Void

    /// Calls `handle` for every event, from many tasks at once.
    public init(_ handle: @escaping @Sendable (ProgressEvent) -> Void) {
        self.handle = handle
    }

    /// Passes the event to the closure.
    public func report(_ event: ProgressEvent) {
        handle(event)
    }
}

/// Passes every event to each of its reporters in turn.
struct FanOutReporter: ProgressReporter {
    let reporters: [any ProgressReporter]

    func report(_ event: ProgressEvent) {
        for reporter in reporters { reporter.report(event) }
    }
}

/// The outcome of one entry in `apply`.
public struct ItemResult: Sendable, Equatable {
    /// How one entry ended, as a word (the `status` of the JSON report).
    public enum Status: String, Sendable, Codable {
        /// Downloaded (or resumed, restarted) and placed, or uploaded.
        case ok
        /// The entry failed: its `error` says why.
        case failed
        /// Up to date: nothing was moved.
        case skipped
        /// The run was interrupted (SIGINT, SIGTERM) before the entry finished; what arrived is
        /// kept in the cache and the next run resumes it.
        case interrupted
    }

    /// How one entry ended, with why when it did not succeed.
    public enum Outcome: Sendable, Equatable {
        /// Transferred (downloaded, resumed, restarted or uploaded) and in place.
        case ok
        /// Already up to date: nothing was transferred.
        case skipped
        /// Failed; the error says why and what to do.
        ///
        /// `indirect`: a report keeps an outcome per entry, and most are `.ok` or `.skipped`;
        /// inline, the error's room made every outcome ten times larger.
        indirect case failed(SyncError)
        /// Stopped by SIGINT or SIGTERM before it finished; what arrived is kept in the cache and
        /// the next run resumes it.
        case interrupted(SyncError.Interruption)
    }

    /// The plan line the entry was applied from, with what was done: a resume that had to go
    /// back to byte 0 (a note that `startsOver`) is a `restart` from offset 0 here. In `ApplyReport.results` its `remote` is nil
    /// (kept per entry to the end of a run of thousands, it was a third of the memory each
    /// took); the `.finished` progress event carries it where the server was asked first (not
    /// for an entry with nothing cached, whose first request fetches it).
    public var item: PlanItem
    /// How the entry ended.
    public var outcome: Outcome
    /// Bytes received over the network for this entry in this run.
    public var transferred: Int64
    /// Seconds the entry took in this run, on a monotonic clock (0 for one interrupted before it
    /// started).
    public var seconds: Double
    /// Things worth knowing that did not fail it, with secrets masked.
    public var notes: [EntryNote]

    /// Creates a result from its parts.
    public init(item: PlanItem, outcome: Outcome, transferred: Int64, seconds: Double, notes: [EntryNote]) {
        self.item = item
        self.outcome = outcome
        self.transferred = transferred
        self.seconds = seconds
        self.notes = notes
    }

    /// How the entry ended, as a word.
    public var status: Status {
        switch outcome {
        case .ok: return .ok
        case .skipped: return .skipped
        case .failed: return .failed
        case .interrupted: return .interrupted
        }
    }

    /// Why it failed or was interrupted, with secrets masked; nil when it succeeded or was
    /// up to date. Its `description` is the operator's message.
    public var error: SyncError? {
        switch outcome {
        case .ok, .skipped: return nil
        case .failed(let error): return error
        case .interrupted(let interruption): return .interrupted(interruption)
        }
    }
}

/// The outcome of `apply`.
public struct ApplyReport: Sendable, Equatable {
    /// One result per plan item, in plan order.
    public var results: [ItemResult]
    /// Seconds the whole apply took, on a monotonic clock.
    public var seconds: Double
    /// What went wrong at the end of the run without failing an entry (a folder or the cache's
    /// records that could not be flushed); empty on a healthy disk.
    public var warnings: [RunWarning]

    /// Creates a report from its parts.
    public init(results: [ItemResult], seconds: Double, warnings: [RunWarning] = []) {
        self.results = results
        self.seconds = seconds
        self.warnings = warnings
    }

    /// The entries that failed.
    public var failed: [ItemResult] { results.filter { $0.status == .failed } }
    /// The entries stopped by SIGINT or SIGTERM before they finished (the next run resumes them).
    public var interrupted: [ItemResult] { results.filter { $0.status == .interrupted } }
    /// Bytes moved over the network in this run: the sum of every entry's `transferred`.
    public var transferred: Int64 { results.reduce(0) { $0.clampedAdding($1.transferred) } }
}
