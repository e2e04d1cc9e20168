import SyncrCore

/// What the command line asked for: one case per command, each carrying only its own options.
enum Command {
    case validate(ValidateOptions)
    case plan(PlanOptions)
    case apply(ApplyOptions)
    case zip(ZipOptions)
    case unzip(UnzipOptions)
    case version(VersionOptions)
    /// `help [COMMAND]` or `COMMAND --help`: the help of `topic` (`.help` is the overview).
    case help(topic: CommandName)
    case initialize(InitOptions)
    case cache(CacheOptions)
    case completions(Completions.Shell)
    case lock(LockOptions)
    /// `report merge -o OUT FILE...`.
    case report(ReportMergeOptions)

    /// The command's name, as typed.
    var name: CommandName {
        switch self {
        case .validate: .validate
        case .plan: .plan
        case .apply: .apply
        case .zip: .zip
        case .unzip: .unzip
        case .version: .version
        case .help: .help
        case .initialize: .initialize
        case .cache: .cache
        case .completions: .completions
        case .lock: .lock
        case .report: .report
        }
    }

    /// Whether SIGINT/SIGTERM cancel the work (and print a notice) rather than end the process.
    var stopsOnSignal: Bool {
        switch self {
        case .plan, .apply, .zip, .unzip, .lock: true
        default: false
        }
    }
}

/// `syncr validate [--quiet] [MANIFEST]`.
struct ValidateOptions {
    var manifest = "syncr.yml"
    var quiet = false
}

/// What `plan` and `apply` share: the manifest and the choices that override it.
struct RunFlags {
    var manifest = "syncr.yml"
    var json = false
    var cacheDirectory: String?
    var jobs: Int?
    var force = false
    /// `--no-fsync`: flush nothing to disk (safe against a killed run, not a power loss).
    var noFsync = false
    var quiet = false
    /// `--shard I/N` or `--shard auto`.
    var shard: ShardRequest?
    /// `--locked`: every download must match the lockfile beside the manifest.
    var locked = false
}

/// What `--shard` said: a shard, or to read it from the CI engine's variables.
enum ShardRequest: Equatable {
    case fixed(Shard)
    case auto
}

/// `syncr plan`.
struct PlanOptions {
    var run = RunFlags()
    var detailedExitcode = false
}

/// `syncr apply`.
struct ApplyOptions {
    var run = RunFlags()
    var connections: Int?
    /// `--lock-timeout`: how long apply waits for another run using the same cache.
    var lockTimeoutMilliseconds = 0
    var progress = ProgressMode.auto
    var progressIntervalMilliseconds = 10_000
    /// `--report FILE`, `--junit FILE`.
    var reportPath: String?
    var junitPath: String?
}

/// `syncr zip SRC_DIR OUT.zip`.
struct ZipOptions {
    var source: String
    var output: String
    var deterministic = false
    var quiet = false
}

/// `syncr unzip ARCHIVE DEST_DIR`.
struct UnzipOptions {
    var archive: String
    var destination: String
    var stripComponents = 0
    /// `--max-unpacked-size SIZE`: the most the archive may unpack to.
    var maxUnpackedSize: Int64?
    /// `--replace`: DEST_DIR may hold what the archive does not; it goes with the old folder.
    var replace = false
    var quiet = false
}

/// `syncr version [--json]`.
struct VersionOptions {
    var json = false
}

/// `syncr init [FILE]`.
struct InitOptions {
    var path = "syncr.yml"
}

/// `syncr cache [prune] [MANIFEST]`.
struct CacheOptions {
    enum Action { case list, prune }
    var action = Action.list
    var manifest = "syncr.yml"
    var manifestGiven = false
    var cacheDirectory: String?
    var olderThan: String?
    var dryRun = false
    var quiet = false
}

/// `syncr lock [--hash] [MANIFEST]`.
struct LockOptions {
    var manifest = "syncr.yml"
    /// `--hash`: download (through the cache) what must be hashed to pin its SHA-256.
    var hash = false
    var cacheDirectory: String?
    var jobs: Int?
    var quiet = false
}

/// `syncr report merge -o OUT FILE...`.
struct ReportMergeOptions {
    var output: String
    var inputs: [String]
}
