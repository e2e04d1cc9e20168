import SyncrHTTP
import SyncrManifest

/// What apply will do with one entry.
public enum Action: String, Sendable, Codable, CaseIterable {
    /// The destination is complete and up to date.
    case skip
    /// Nothing usable is cached: fetch the whole file.
    case download
    /// A partial download is cached and still valid: fetch the rest from `offset`.
    case resume
    /// A partial download is cached but cannot be continued: discard it and fetch from 0.
    case restart
    /// An upload will be sent.
    case upload
    /// The entry could not be planned (the server could not be asked, or refused).
    case error
}

/// Which list of the manifest an entry is in; an entry is named by its kind and its index there.
public enum EntryKind: String, Sendable, Codable, CaseIterable {
    /// An entry of `downloads:`.
    case download
    /// An entry of `uploads:`.
    case upload
}

/// One line of a plan.
public struct PlanItem: Sendable, Equatable {
    /// Whether the entry is a download or an upload.
    public var kind: EntryKind
    /// Index of the entry in `downloads:` or `uploads:`.
    public var index: Int
    /// For an object listed from an `s3://` prefix (whose objects share the prefix's `index`),
    /// its position among them; nil otherwise. `kind`, `index` and `object` name the item.
    public var object: Int?
    /// An upload's `from`, as written.
    public var from: String?
    /// The URL as written in the manifest.
    public var url: String
    /// A download's destination as written in the manifest (`to:`, relative to the manifest's
    /// folder); empty for an upload, whose target (its `to:`) is `url` and whose source is `from`.
    public var to: String
    /// What apply will do with the entry.
    public var action: Action
    /// The remote size in bytes, nil when unknown.
    public var size: Int64?
    /// Where the transfer starts: the bytes from 0 that are cached and kept. A split download
    /// may keep pieces beyond them too; all it keeps is `size - bytes` (`bytes` leaves them out).
    public var offset: Int64
    /// Bytes the transfer would fetch, nil when the size is unknown.
    public var bytes: Int64?
    /// One line saying why.
    public var reason: String
    /// The entry has `insecure: true`: its server's certificate is not checked (the reason
    /// says so too).
    public var insecure = false

    /// What the server said, its `finalURL` masked like every text (nil when the probe failed,
    /// when apply fetched without asking first, and in `ApplyReport.results`).
    public var remote: RemoteResource?
    /// Why the entry could not be planned, for `.error` items (`reason` is its description).
    public var error: SyncError? {
        get { rare?.error }
        set { rare = Rare(error: newValue, uploadContext: rare?.uploadContext) }
    }
    /// Destination digests computed while planning, to record on skip.
    var destinationDigests: [String: String]?
    /// What an upload will send.
    var uploadContext: UploadContext? {
        get { rare?.uploadContext }
        set { rare = Rare(error: error, uploadContext: newValue) }
    }

    /// `error` and `uploadContext`, which most items lack, held apart: inline they were two
    /// fifths of an item, and a report keeps one item per entry. Never changed in place (a
    /// setter makes a new one), so items keep value semantics.
    private final class Rare: Sendable {
        let error: SyncError?
        let uploadContext: UploadContext?

        init(error: SyncError?, uploadContext: UploadContext?) {
            self.error = error
            self.uploadContext = uploadContext
        }
    }
    private var rare: Rare?

    /// Equal when they say the same: every public property (not what `apply` keeps for
    /// itself, such as an upload's tree or digests computed while planning). A public property
    /// added to `PlanItem` belongs here too; a `Hashable` conformance would have to hash the
    /// same properties.
    public static func == (a: PlanItem, b: PlanItem) -> Bool {
        a.kind == b.kind && a.index == b.index && a.object == b.object && a.from == b.from && a.url == b.url
            && a.to == b.to && a.action == b.action && a.size == b.size && a.offset == b.offset && a.bytes == b.bytes
            && a.reason == b.reason && a.insecure == b.insecure && a.remote == b.remote && a.error == b.error
    }

    /// Creates a plan line from its parts; the others (`from`, `remote`, `insecure`, ...) are set
    /// afterwards where they apply.
    public init(kind: EntryKind = .download, index: Int, url: String, to: String, action: Action,
                size: Int64?, offset: Int64, bytes: Int64?, reason: String) {
        self.kind = kind
        self.index = index
        self.url = url
        self.to = to
        self.action = action
        self.size = size
        self.offset = offset
        self.bytes = bytes
        self.reason = reason
    }
}

extension PlanItem {
    /// This item as one that could not be planned, for `error` (masked by `redactor`).
    func failing(_ error: SyncError, _ redactor: Redactor) -> PlanItem {
        var item = self
        let masked = error.scrubbed(redactor)
        item.action = .error
        item.error = masked
        item.reason = masked.description
        return item
    }

    /// This item marked as made without certificate checks when `settings` say `insecure`.
    func noting(_ settings: Settings) -> PlanItem {
        guard settings.network.insecure else { return self }
        var item = self
        item.insecure = true
        item.reason += (item.reason.isEmpty ? "" : "; ") + "certificate checks are off for this entry (insecure: true)"
        return item
    }
}

/// A whole plan, in manifest order.
public struct Plan: Sendable, Equatable {
    /// One line per entry: downloads first, then uploads, each in manifest order.
    public var items: [PlanItem]
    /// Things to know before applying, e.g. that the downloads need more than a disk has free.
    public var warnings: [PlanWarning]
    /// Whether apply flushes what it writes to disk (false with `fsync: false` or `--no-fsync`).
    public var fsync: Bool
    /// The shard the plan covers, when the run was given `--shard`.
    public var sharding: ShardRun?

    /// Creates a plan from its parts.
    public init(items: [PlanItem], warnings: [PlanWarning] = [], fsync: Bool = true) {
        self.items = items
        self.warnings = warnings
        self.fsync = fsync
    }

    // Sums without `filter`, which copies every item: a plan of 100,000 entries is summed a
    // dozen times to print one line.

    /// Bytes all downloads would fetch (unknown sizes count as 0; see `unknownSizes`).
    public var downloadBytes: Int64 {
        items.reduce(0) { $1.kind == .download ? $0.clampedAdding($1.bytes ?? 0) : $0 }
    }
    /// Bytes all uploads would send.
    public var uploadBytes: Int64 { items.reduce(0) { $1.kind == .upload ? $0.clampedAdding($1.bytes ?? 0) : $0 } }
    /// Entries that will transfer but whose size the server did not give.
    public var unknownSizes: Int {
        items.reduce(0) { $1.bytes == nil && $1.action != .skip && $1.action != .error ? $0 + 1 : $0 }
    }

    /// `unknownSizes` of one kind: downloads whose server gave no size, uploads whose size is
    /// known only once they are built (a zipped folder).
    public func unknownSizes(of kind: EntryKind) -> Int {
        items.reduce(0) { $1.kind == kind && $1.bytes == nil && $1.action != .skip && $1.action != .error ? $0 + 1 : $0 }
    }

    /// How many items have `action`.
    public func count(_ action: Action) -> Int { items.reduce(0) { $1.action == action ? $0 + 1 : $0 } }

    /// Whether apply would change anything.
    public var hasWork: Bool { items.contains { $0.action != .skip } }
}
