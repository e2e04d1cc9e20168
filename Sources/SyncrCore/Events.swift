/// What happens during a run, for whoever shows progress. Delivered from many tasks at once.
public enum ProgressEvent: Sendable {
    /// An entry starts transferring.
    case started(item: PlanItem)
    /// Bytes moved for an entry (a running total for this run): received for a download, sent
    /// for an upload. `kind` ("download" or "upload") tells which list `index` counts in.
    case progress(index: Int, transferred: Int64, total: Int64?, kind: String = "download")
    /// An attempt failed and will be retried after `delay` seconds.
    case retrying(index: Int, attempt: Int, delay: Double, error: String, kind: String = "download")
    /// Something the operator should know (e.g. "the server ignored Range; restarted from byte 0").
    case note(index: Int, message: String, kind: String = "download")
    /// An entry is done, one way or the other.
    case finished(result: ItemResult)
}

/// Receives progress events.
public protocol ProgressReporter: Sendable {
    func report(_ event: ProgressEvent)
}

/// The outcome of one entry in `apply`.
public struct ItemResult: Sendable {
    /// How one entry ended.
    public enum Status: String, Sendable, Codable {
        case ok, failed, skipped
        /// The run was interrupted (SIGINT, SIGTERM) before the entry finished; what arrived is
        /// kept in the cache and the next run resumes it.
        case interrupted
    }

    /// The plan line the entry was applied from.
    public var item: PlanItem
    /// How the entry ended.
    public var status: Status
    /// Bytes received over the network for this entry in this run.
    public var transferred: Int64
    /// Seconds the entry took in this run, on a monotonic clock (0 for one interrupted before it
    /// started).
    public var seconds: Double
    /// Why it failed, with secrets masked.
    public var error: String?
    /// Things worth knowing that did not fail it, with secrets masked.
    public var notes: [String]

    /// Creates a result from its parts.
    public init(item: PlanItem, status: Status, transferred: Int64, seconds: Double, error: String?, notes: [String]) {
        self.item = item
        self.status = status
        self.transferred = transferred
        self.seconds = seconds
        self.error = error
        self.notes = notes
    }
}

/// The outcome of `apply`.
public struct ApplyReport: Sendable {
    /// One result per plan item, in plan order.
    public var results: [ItemResult]
    /// Seconds the whole apply took, on a monotonic clock.
    public var seconds: Double

    /// Creates a report from its parts.
    public init(results: [ItemResult], seconds: Double) {
        self.results = results
        self.seconds = seconds
    }

    /// The entries that failed.
    public var failed: [ItemResult] { results.filter { $0.status == .failed } }
    /// The entries stopped by SIGINT or SIGTERM before they finished (the next run resumes them).
    public var interrupted: [ItemResult] { results.filter { $0.status == .interrupted } }
    /// Bytes moved over the network in this run: the sum of every entry's `transferred`.
    public var transferred: Int64 { results.reduce(0) { $0 + $1.transferred } }
}
