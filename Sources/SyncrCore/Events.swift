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
    public enum Status: String, Sendable, Codable {
        case ok, failed, skipped
        /// The run was interrupted (SIGINT, SIGTERM) before the entry finished; what arrived is
        /// kept in the cache and the next run resumes it.
        case interrupted
    }

    public var item: PlanItem
    public var status: Status
    /// Bytes received over the network for this entry in this run.
    public var transferred: Int64
    public var seconds: Double
    /// Why it failed, with secrets masked.
    public var error: String?
    /// Things worth knowing that did not fail it, with secrets masked.
    public var notes: [String]

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
    public var results: [ItemResult]
    public var seconds: Double

    public init(results: [ItemResult], seconds: Double) {
        self.results = results
        self.seconds = seconds
    }

    public var failed: [ItemResult] { results.filter { $0.status == .failed } }
    public var interrupted: [ItemResult] { results.filter { $0.status == .interrupted } }
    public var transferred: Int64 { results.reduce(0) { $0 + $1.transferred } }
}
