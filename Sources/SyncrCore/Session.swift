#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// Command-line choices that override the manifest.
public struct RunOptions: Sendable {
    /// `--cache DIR`: the cache folder instead of the manifest's.
    public var cacheDirectory: String?
    /// `--jobs N`: files in flight instead of `defaults.jobs` (held to 1...256, as the manifest's).
    public var jobs: Int?
    /// `--connections N`: parallel Range requests per large file, for every entry.
    public var connections: Int?
    /// `--force`: upload even what is unchanged since the last upload.
    public var force: Bool
    /// `--no-fsync` (false): flush nothing to disk, instead of the manifest's `fsync:`.
    public var fsync: Bool?
    /// `--shard I/N`: run only the entries of this shard.
    public var shard: Shard?
    /// The manifest's lockfile: balances shards by bytes, and with `locked` pins every download.
    public var lock: Lockfile?
    /// `--locked`: every download must match `lock` (size, ETag, SHA-256).
    public var locked: Bool
    /// Flushes a changed folder at the end of `apply` instead of `fsync`: a test plays a disk
    /// that fails with it (no real one can be made to, here, without root tools).
    var folderFlush: (@Sendable (String) -> FileError?)?

    /// Creates options from the flags given; nil (or false) keeps the manifest's choice.
    public init(cacheDirectory: String? = nil, jobs: Int? = nil, connections: Int? = nil, force: Bool = false,
                fsync: Bool? = nil, shard: Shard? = nil, lock: Lockfile? = nil, locked: Bool = false) {
        self.cacheDirectory = cacheDirectory
        self.jobs = jobs
        self.connections = connections
        self.force = force
        self.fsync = fsync
        self.shard = shard
        self.lock = lock
        self.locked = locked
    }
}

/// One run of syncr over a manifest: plans and applies over one transport, so every request of
/// the run shares connections.
public final class Session: Sendable {
    /// The manifest the run works on, with `--connections` already applied to every download.
    public let manifest: Manifest
    /// The cache folder of the run (`--cache` or the manifest's), flushing as `--no-fsync` or
    /// `fsync:` say.
    public let cache: Cache
    /// Files in flight at once: `--jobs`, else `defaults.jobs`, from 1 to 256.
    public let jobs: Int
    /// Masks the manifest's secrets in everything the session reports: plan reasons, errors, notes
    /// and progress events.
    public let redactor: Redactor
    /// `--force` was given.
    public let force: Bool
    /// Carries every request of the run.
    private let engine: any Transport
    /// The engine the session made for itself, which `close` shuts down; nil when the caller
    /// gave the transport (and so owns it).
    private let ownEngine: TransferEngine?
    /// The shard this run is, and how the manifest was split; nil when it runs every entry.
    public let sharding: ShardRun?
    /// The lock every download must match (`--locked`); nil for an unlocked run.
    public let locked: Lockfile?
    /// In a locked run, why the whole manifest (every shard's entries) cannot run against the
    /// lock; found before the shard's entries were picked out.
    private let lockMismatches: [String]
    let reporter: (any ProgressReporter)?
    private let flusher = FlushPool()
    /// The entries `itemCount` listed, for the `plan` or `apply` that follows to use once.
    private let prelisted = Locked<Entries?>(nil)
    /// Servers nobody answered for, shared by every entry of one `plan` or `apply` (each starts
    /// afresh: a session may outlive a server's outage).
    let unreachable = UnreachableHosts()
    private let folders: ChangedFolders
    /// Network slots (`jobs`): held while an entry fetches.
    let slots: AsyncSemaphore
    /// Turns of `apply`'s workers (`turnCount`): a worker takes one before its next entry and
    /// keeps it from one entry to the next (see `apply`).
    let turns: AsyncSemaphore
    /// Questions to servers in flight in `apply`: as many as `plan` asks at once. Without a
    /// bound every entry in flight (`jobs + 64`) asked at once, and the requests beyond the
    /// per-host connections only queued in curl; bounded by `jobs` alone, a run of default
    /// `jobs: 4` would ask four servers at a time across the internet.
    private let questions: AsyncSemaphore
    /// Destinations hashed at once by planning (one per core): as many as when they ran on the
    /// cooperative pool, now that they run beside it, so that a manifest of large pinned files
    /// does not read them all at once from one disk.
    private let destinationHashes = AsyncSemaphore(limit: ProcessInfo.processInfo.activeProcessorCount)
    /// One `apply` at a time: two at once on one session moved each other's files ("cannot
    /// move the finished file into place"), and share its slots and leftovers.
    private let applying = AsyncSemaphore(limit: 1)

    /// Creates a session for `manifest`; no request is made until `plan`.
    /// - Parameters:
    ///   - options: command-line choices that override the manifest.
    ///   - reporter: receives progress events, with secrets already masked; nil for none.
    ///   - transport: carries every request of the run; nil for a `TransferEngine` of the
    ///     session's own (capped at `max_connections_per_host`), shut down by `close`. A transport
    ///     given here stays the caller's to shut down, so several sessions can share one.
    public init(manifest: Manifest, options: RunOptions = RunOptions(), reporter: (any ProgressReporter)? = nil,
                transport: (any Transport)? = nil) {
        var manifest = manifest
        if let connections = options.connections {
            for i in manifest.downloads.indices { manifest.downloads[i].settings.connections = connections }
        }
        // A locked run checks the lock against the whole manifest before other shards' entries
        // go: checked against the shard alone, a lock that lacked an entry failed that entry's
        // shard only, and a CI matrix showed the other shards green.
        var wholeRedactor: Redactor?
        if options.locked, let lock = options.lock {
            let redactor = Self.redactor(for: manifest)
            lockMismatches = LockCheck.problems(manifest, lock: lock, lockPath: Lockfile.path(forManifest: manifest.path),
                                                redactor: redactor)
            wholeRedactor = redactor
        } else {
            lockMismatches = []
        }
        if let shard = options.shard {
            let assignment = ShardAssignment(manifest: manifest, lock: options.lock, count: shard.count)
            sharding = ShardRun(shard: shard, method: assignment.method,
                                manifestEntries: manifest.downloads.count + manifest.uploads.count)
            manifest.downloads.removeAll { !assignment.contains(.download($0.index), in: shard.index) }
            manifest.uploads.removeAll { !assignment.contains(.upload($0.index), in: shard.index) }
        } else {
            sharding = nil
        }
        locked = options.locked ? options.lock : nil
        if let locked {
            // The lock's SHA-256 is checked like one pinned in the manifest, and recorded as
            // verified, so that the next locked run can trust the destination without asking.
            for i in manifest.downloads.indices {
                let d = manifest.downloads[i]
                if let sha = locked.entry(to: d.to)?.sha256, !d.checksums.contains(where: { $0.algorithm == "sha256" }) {
                    manifest.downloads[i].checksums.append(.sha256(sha))
                }
            }
        }
        self.manifest = manifest
        force = options.force
        let flushes = options.fsync ?? manifest.defaults.fsync
        cache = Cache(directory: options.cacheDirectory ?? manifest.cacheDirectory, flushes: flushes)
        folders = options.folderFlush.map { ChangedFolders(flushes: flushes, flush: $0) } ?? ChangedFolders(flushes: flushes)
        // Held to the manifest's limits: `jobs: Int.max` from a library caller overflowed
        // where the workers are counted.
        jobs = min(max(options.jobs ?? manifest.defaults.jobs, Settings.jobsRange.lowerBound), Settings.jobsRange.upperBound)
        // A shard's redactor masks its own entries' secrets: each one more is looked for in
        // every text the run scrubs.
        let redactor = options.shard == nil ? wholeRedactor ?? Self.redactor(for: manifest) : Self.redactor(for: manifest)
        self.redactor = redactor
        if let transport {
            engine = transport
            ownEngine = nil
        } else {
            let own = TransferEngine(configuration: .init(maxConnectionsPerHost: manifest.defaults.maxConnectionsPerHost))
            engine = own
            ownEngine = own
        }
        slots = AsyncSemaphore(limit: jobs)
        turns = AsyncSemaphore(limit: Self.turnCount(jobs: jobs))
        questions = AsyncSemaphore(limit: Self.questionWidth(jobs: jobs))
        self.reporter = reporter.map { ScrubbingReporter(inner: $0, redactor: redactor) }
    }

    /// Masks the secrets of `manifest`: its own, its object stores', its `.netrc` passwords,
    /// and the proxy's.
    static func redactor(for manifest: Manifest) -> Redactor {
        Redactor(secrets: manifest.secrets + S3Stores.secrets(of: manifest)
                 + NetrcSecrets.passwords(of: manifest) + ProxySecrets.passwords())
    }

    /// Releases the transfer engine the session made (a transport given to `init` is left
    /// running); call once at the end. Requests after it are refused: an `apply` then ends every
    /// entry `.interrupted`.
    public func close() {
        ownEngine?.shutdown()
    }

    // MARK: plan

    /// One manifest entry, download or upload.
    enum Entry: Sendable {
        case download(Download)
        case upload(Upload)
        /// An `s3://` prefix download whose objects could not be listed, or one of its objects
        /// that cannot be written (`S3Listing.filesThatAreFolders`), and why.
        case unlisted(Download, SyncError)
    }

    /// How many items the next `plan` or `apply` goes through: the manifest's entries, each
    /// `s3://` prefix download counted as the objects it lists. Those are listed now, and the
    /// call that follows takes this listing instead of listing again (one call only: a later
    /// one lists afresh). What a progress display counts its items against.
    public func itemCount() async -> Int {
        let listed = await listedEntries()
        if listed.listed != nil { prelisted.withLock { $0 = listed } }
        return listed.count
    }

    /// Downloads first, then uploads, each in manifest order, with each `s3://` prefix download
    /// replaced by the downloads of its objects (listed now, in order, unless `itemCount` just did).
    func listedEntries() async -> Entries {
        guard manifest.downloads.contains(where: { $0.s3?.isPrefix == true }) else { return entries }
        if let listed = prelisted.withLock({ box -> Entries? in defer { box = nil }; return box }) { return listed }
        var result: [Entry] = []
        for download in manifest.downloads {
            switch await S3Listing.expand(download, engine: engine, redactor: redactor) {
            case .success(let entries): result += entries
            case .failure(let failure): result.append(.unlisted(download, failure))
            }
        }
        Self.markSharedURLs(&result)
        var listed = entries
        listed.listed = result + manifest.uploads.map(Entry.upload)
        return listed
    }

    /// `Download.markSharedURLs` over the downloads of `entries`: two prefixes may list one
    /// object into two folders, or a prefix one that another entry names.
    static func markSharedURLs(_ entries: inout [Entry]) {
        var downloads: [Download] = []
        var positions: [Int] = []
        for (i, entry) in entries.enumerated() {
            if case .download(let d) = entry {
                downloads.append(d)
                positions.append(i)
            }
        }
        Download.markSharedURLs(&downloads)
        for (d, i) in zip(downloads, positions) where d.sharesURL { entries[i] = .download(d) }
    }

    /// How many servers a run asks at once: questions are small, so more of them than
    /// transfers, but bounded.
    static func questionWidth(jobs: Int) -> Int { max(jobs, 16) }

    /// Turns of `apply`'s workers. With `jobs` of at least the questions' width, `jobs`: every
    /// worker with a turn finds a network slot free, and a worker of quick entries keeps both
    /// from one to the next. With fewer, one for every worker, as before turns: more entries
    /// ask at once than transfer, and `questionWidth` of them must be able to ask however
    /// slowly the others pass their turns on (a loaded ThreadSanitizer run saw only `jobs`
    /// asking); an entry then waits for its network slot instead.
    static func turnCount(jobs: Int) -> Int {
        jobs >= questionWidth(jobs: jobs) ? jobs : jobs + finishing
    }

    /// Downloads first, then uploads, each in manifest order.
    var entries: Entries { Entries(downloads: manifest.downloads, uploads: manifest.uploads) }

    /// The manifest's entries as one list, each made when it is reached: an array of them
    /// would copy every entry (a few hundred bytes each) for the whole run.
    struct Entries: RandomAccessCollection, Sendable {
        let downloads: [Download]
        let uploads: [Upload]
        /// Every entry, made up front, once `s3://` prefixes were listed into their objects.
        var listed: [Entry]?
        var startIndex: Int { 0 }
        var endIndex: Int { listed?.count ?? downloads.count + uploads.count }
        subscript(position: Int) -> Entry {
            if let listed { return listed[position] }
            return position < downloads.count ? .download(downloads[position]) : .upload(uploads[position - downloads.count])
        }
    }

    /// Asks every server about its file (concurrently) and decides what apply would do.
    /// - Parameter progress: also receives this call's events (`.retrying` while servers are
    ///   asked), with secrets masked, from many tasks at once.
    public func plan(progress: (@Sendable (ProgressEvent) -> Void)? = nil) async -> Plan {
        let reporter = reporter(adding: progress)
        unreachable.forgetAll()
        let index = cacheIndex()
        let obstacles = FolderObstacles()
        let entries = await listedEntries()
        let skips = await lockedSkips(entries)
        let width = max(jobs, min(Self.questionWidth(jobs: jobs), entries.count))
        let items = await Self.mapBounded(Array(entries.indices), width: width) { i in
            var item: PlanItem
            switch entries[i] {
            case .download(let download):
                if let skip = skips[i] {
                    item = skip.noting(download.settings)
                } else {
                    item = await self.planItem(download, index: index, obstacles: obstacles, reporter: reporter)
                        .noting(download.settings)
                }
                item.object = download.object
            case .upload(let upload): item = await self.uploadPlanner.plan(upload).noting(upload.settings)
            case .unlisted(let download, let failure): item = self.unlistedItem(download, failure)
            }
            // Every reason is masked where it is made; once more here, so that no path can print
            // a secret (masking is idempotent).
            item.reason = self.redactor.scrub(item.reason)
            return item
        }
        let warnings = [NetrcSecrets.warning(for: manifest)].compactMap { $0 } + spaceWarnings(items, entries: entries)
        var plan = Plan(items: items, warnings: warnings, fsync: cache.flushes)
        plan.sharding = sharding
        return plan
    }

    private var uploadPlanner: UploadPlanner {
        UploadPlanner(cache: cache, engine: engine, redactor: redactor, force: force, jobs: jobs)
    }

    /// - Parameters:
    ///   - known: the entry's local facts when the caller has just read them.
    ///   - index: what the cache held when this plan or apply began (nil: ask the disk).
    ///   - obstacles: the run's look at destination folders (nil: nobody looks; the obstacle is
    ///     found when the folder is made).
    func planItem(_ download: Download, known: LocalFacts? = nil, index: CacheIndex?, obstacles: FolderObstacles? = nil,
                  reporter: (any ProgressReporter)?) async -> PlanItem {
        var item = PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to, action: .download,
                            size: nil, offset: 0, bytes: nil, reason: "")
        let remote: RemoteResource
        switch await probe(download, reporter: reporter) {
        case .success(let r):
            remote = r
        case .failure(let error):
            return item.failing(error, redactor)
        }
        // What callers see, masked as every text is: the final URL may carry a token in its
        // query or a ${VAR}'s value.
        var shown = remote
        shown.finalURL = redactor.scrub(remote.finalURL)
        item.remote = shown
        item.size = remote.size
        if let entry = locked?.entry(to: download.to),
           let change = LockCheck.drift(entry, remote, finalURL: redactor.scrubLocation(remote.finalURL)) {
            return item.failing(.lockedVersionChanged(lockfile: lockName, change: change), redactor)
        }
        if download.unzip {
            let decision = Planner.decideUnpacked(checksums: download.checksums, remote: remote,
                                                   local: unpackFacts(download, known: known, index: index, obstacles: obstacles))
            if let blocked = decision.blocked { return item.failing(blocked.error(destination: download.to), redactor) }
            item.action = decision.action
            item.offset = decision.offset
            item.bytes = decision.bytes
            item.reason = redactor.scrub(decision.reason)
            return item
        }
        var local = known ?? localFacts(download, index: index, obstacles: obstacles)
        if Planner.needsDestinationDigest(checksums: download.checksums, remote: remote, local: local) {
            // Off the cooperative pool (a large file held one of its few threads for seconds),
            // and stopped by a signal: an interrupted hash leaves no digests, as one that failed.
            let destination = download.destination, algorithms = download.checksums.map(\.algorithm)
            await destinationHashes.acquire()
            local.destinationDigests = try? await BlockingIO.run { try FS.digests(of: destination, algorithms: algorithms) }
            await destinationHashes.release()
        }
        let decision = Planner.decide(checksums: download.checksums, remote: remote, local: local)
        if let blocked = decision.blocked { return item.failing(blocked.error(destination: download.to), redactor) }
        item.action = decision.action
        item.offset = decision.offset
        item.bytes = decision.bytes
        item.reason = redactor.scrub(decision.reason)
        if decision.action == .skip, local.state?.complete != true || local.state?.destinationFingerprint != local.destination {
            item.destinationDigests = local.destinationDigests
        }
        return item
    }

    /// Like `planItem`, but without asking the server when nothing local could be kept: the GET
    /// that follows learns size and validators anyway, and a HEAD per small file would cost
    /// as much as the file. At most `questionWidth` entries ask at once.
    ///
    /// A missing destination whose folder cannot be made (a file in the way) is asked about, as
    /// `plan` does, and so fails before its download: it failed after it, when the folder was made.
    ///
    /// - Returns: the item; whether the cache held nothing at all for the entry (no record,
    ///   no data), so that the download has nothing to clear first; and for an `unzip:` entry
    ///   whether its record says syncr unpacked the folder there (`Downloader.unpackedBefore`),
    ///   read here with the rest so that the record is read once.
    func applyItem(_ download: Download, key: String, index: CacheIndex?, leftovers: LeftoverIndex? = nil,
                   obstacles: FolderObstacles? = nil,
                   reporter: (any ProgressReporter)?) async -> (PlanItem, nothingCached: Bool, unpackedBefore: Bool) {
        // A locked skip places nothing, so nothing asks whose the folder is.
        if let skip = lockedSkip(download) { return (skip, false, false) }
        let local = localFacts(download, key: key, index: index, leftovers: leftovers, obstacles: obstacles)
        let nothingCached = local.state == nil && local.dataSize == nil
        let unpackedBefore = download.unzip && local.state?.destination == download.destination
        func ask() async -> PlanItem {
            await questions.acquire()
            let item = await planItem(download, known: local, index: index, obstacles: obstacles, reporter: reporter)
            await questions.release()
            return item
        }
        // A locked entry is always asked about: the answer must match the lock before a byte moves.
        if locked != nil { return (await ask(), nothingCached, unpackedBefore) }
        let mustAsk = S3Stores.failure(url: download.url, settings: download.settings) != nil
            || local.state != nil || local.folderBlocked != nil
            || (!download.unzip && (local.destinationBlocked || (local.destination != nil && !download.checksums.isEmpty)))
        guard !mustAsk else { return (await ask(), nothingCached, unpackedBefore) }
        let item = PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to,
                            action: .download, size: nil, offset: 0, bytes: nil,
                            reason: local.destination == nil ? "nothing cached" : "the destination exists but syncr has no record of it")
        return (item, nothingCached, unpackedBefore)
    }

    /// In a locked run, the skip of every download the record vouches for, found in chunks of
    /// 512 over the cores: no request is needed, so one task per chunk rather than per entry.
    func lockedSkips(_ entries: Entries) async -> [PlanItem?] {
        guard locked != nil else { return [PlanItem?](repeating: nil, count: entries.count) }
        let chunks = stride(from: 0, to: entries.count, by: 512).map { $0..<min($0 + 512, entries.count) }
        let found = await Self.mapBounded(chunks, width: ProcessInfo.processInfo.activeProcessorCount) { range in
            range.map { i -> PlanItem? in
                if case .download(let d) = entries[i] { return self.lockedSkip(d) }
                return nil
            }
        }
        return found.flatMap { $0 }
    }

    /// In a locked run, why the manifest cannot run against the lock (`LockCheck.problems`):
    /// empty when every download of the manifest is in it. In a sharded run also the other
    /// shards' downloads are held against the lock, so that every shard of a stale lock fails
    /// alike.
    public func lockProblems() -> [String] { lockMismatches }

    /// The lockfile's name, for messages.
    var lockName: String { Lockfile.path(forManifest: manifest.path) }

    /// In a locked run, a skip for a download whose destination the record vouches for against
    /// the lock's SHA-256: no request at all. Nil when the server must be asked.
    func lockedSkip(_ download: Download) -> PlanItem? {
        guard let entry = locked?.entry(to: download.to) else { return nil }
        let state = cache.loadState(Cache.key(for: download))
        let destination = download.unzip ? nil : FS.fingerprint(download.destination)
        let tree = download.unzip ? FolderReplace.fingerprint(download.destination) : nil
        guard LockCheck.vouches(state, for: entry, destination: destination, tree: tree, unzip: download.unzip) else { return nil }
        return PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to, action: .skip,
                        size: state?.size, offset: 0, bytes: 0,
                        reason: "up to date (verified against the SHA-256 in \(lockName); the server was not asked)")
    }

    /// HEAD (or ranged GET) with the entry's retry policy.
    func probe(_ download: Download, reporter: (any ProgressReporter)?) async -> Result<RemoteResource, SyncError> {
        if let message = S3Stores.failure(url: download.url, settings: download.settings) {
            return .failure(.other(message: message))
        }
        let builder = RequestBuilder(download: download)
        let request = builder.probe()
        var retrying = Retrying(retries: download.settings.retries, index: download.index, kind: .download,
                                reporter: reporter, redactor: redactor)
        retrying.object = download.object
        retrying.s3 = builder.s3
        retrying.credentials = builder.credentials
        retrying.unreachable = (unreachable, builder.url, builder.displayURL)
        do {
            return .success(try await retrying.run {
                switch await engine.probe(S3Object.resigned(request, by: builder.s3)) {
                case .success(let remote): return .done(remote)
                case .failure(let error): return .failed(await Self.explained(error, builder: builder, engine: engine), position: 0)
                }
            })
        } catch let error as SyncError {
            return .failure(error)
        } catch {
            return .failure(.interrupted(.whileAsking))
        }
    }

    /// What is on disk for an unpacked download: the record, the archive in the cache, and the
    /// folder's shape now.
    /// - Parameter known: apply's `localFacts`, which read the record and the archive's size
    ///   just before: not read again.
    func unpackFacts(_ download: Download, known: LocalFacts? = nil, index: CacheIndex?,
                     obstacles: FolderObstacles? = nil) -> UnpackFacts {
        let kind = FS.kind(download.destination)
        let cached = known.map { ($0.state, $0.dataSize) } ?? {
            let key = Cache.key(for: download)
            let may = index?.mayHave(key) ?? (record: true, data: true)
            return (cache.loadState(key, stateFile: may.record), may.data ? FS.fileSize(cache.dataPath(key)) : nil)
        }()
        var facts = UnpackFacts(state: cached.0, dataSize: cached.1,
                                tree: FolderReplace.fingerprint(download.destination),
                                destinationBlocked: [.file, .other].contains(kind))
        if kind == .missing { facts.folderBlocked = folderBlocked(download, obstacles) }
        facts.unpackedHere = facts.state?.destination == download.destination
        return facts
    }

    /// Why the folder `download` goes into cannot be made, its path shown as in the manifest's
    /// folder; nil when it can, or when nobody looks (`obstacles` nil).
    private func folderBlocked(_ download: Download, _ obstacles: FolderObstacles?) -> String? {
        obstacles?.obstacle(for: FS.parentFolder(download.destination)).map(blockedText)
    }

    /// An obstacle as the plan names it, its path as in the manifest's folder.
    private func blockedText(_ obstacle: FolderObstacle) -> String {
        let inside = manifest.directory.hasSuffix("/") ? manifest.directory : manifest.directory + "/"
        let path = obstacle.path.hasPrefix(inside) ? String(obstacle.path.dropFirst(inside.count)) : obstacle.path
        return "\(path): \(obstacle.what)"
    }

    /// One listing of the cache folder for this plan or apply (`CacheIndex`); nil when no entry
    /// is a download. The record journal is read again too, where another run changed it.
    private func cacheIndex() -> CacheIndex? {
        guard !manifest.downloads.isEmpty else { return nil }
        cache.journal.refresh()
        return CacheIndex(directory: cache.directory)
    }

    /// What is on disk for a download: its record, its cache file's size, and the destination.
    /// - Parameter key: the entry's `Cache.key(for:)`, when the caller has it already.
    /// - Parameter leftovers: apply's listing of destination folders: a destination in a
    ///   folder that did not exist is not looked at.
    /// - Parameter obstacles: the run's look at destination folders, for a missing destination.
    func localFacts(_ download: Download, key: String? = nil, index: CacheIndex?,
                    leftovers: LeftoverIndex? = nil, obstacles: FolderObstacles? = nil) -> LocalFacts {
        let key = key ?? Cache.key(for: download)
        let may = index?.mayHave(key) ?? (record: true, data: true)
        var facts = LocalFacts()
        facts.state = cache.loadState(key, stateFile: may.record)
        facts.dataSize = may.data ? FS.fileSize(cache.dataPath(key)) : nil
        // Apply's listing of the folder says what it was, and what blocks it, in one look.
        let folder = leftovers?.folderFacts(FS.parentFolder(download.destination))
        if let folder, folder.missing {
            facts.folderBlocked = folder.obstacle.map(blockedText)
            return facts
        }
        switch FS.kindAndFingerprint(download.destination) {
        case (.file, let fingerprint): facts.destination = fingerprint
        case (.directory, _), (.other, _): facts.destinationBlocked = true
        case (.missing, _):
            facts.folderBlocked = folder.map { $0.listed ? nil : $0.obstacle.map(blockedText) } ?? folderBlocked(download, obstacles)
        }
        return facts
    }

    // MARK: apply

    /// Plans and carries out every entry: up to `jobs` entries at once, each asked about and then
    /// fetched in one go, so the questions for some overlap with the transfers of others. Every
    /// entry runs to its end whatever happens to the others.
    ///
    /// Cancelling the calling task (what the CLI does on SIGINT and SIGTERM; the library installs
    /// no signal handler) stops it: transfers end, what arrived is recorded durably, entries not
    /// started do not start, and each unfinished entry is reported `.interrupted`; entries
    /// already being flushed and moved into place finish.
    ///
    /// The caller holds the cache folder's `CacheLock` while it runs: apply does not take it,
    /// and two runs on one cache would move each other's files. Two calls on one session run one
    /// after the other (the second waits, and if its task is cancelled meanwhile, starts none of
    /// its entries).
    ///
    /// - Parameter progress: also receives this call's events (an entry started, bytes moved, a
    ///   retry, a note, an entry finished), with secrets masked, from many tasks at once.
    public func apply(progress: (@Sendable (ProgressEvent) -> Void)? = nil) async -> ApplyReport {
        await applying.acquire()
        let report = await applyAlone(progress: progress)
        await applying.release()
        return report
    }

    /// `apply`, with no other `apply` of this session running.
    private func applyAlone(progress: (@Sendable (ProgressEvent) -> Void)?) async -> ApplyReport {
        let reporter = reporter(adding: progress)
        unreachable.forgetAll()
        let clock = ContinuousClock()
        let start = clock.now
        // A cache folder that cannot be made (a file in its place: `RunOptions.cacheDirectory`
        // is not checked as the CLI's `--cache` is) fails every download once, naming it: each
        // failed on its own file below it ("….data: cannot open: Not a directory").
        let cacheProblem: FileError? = manifest.downloads.isEmpty ? nil : {
            do throws(FileError) { try cache.prepare() } catch { return error }
            return nil
        }()
        let index = cacheIndex()
        // Upload archives killed runs left (half built, or built and not sent), before this
        // run zips. Not left for the entry's own upload to replace: an entry that is up to date
        // (a killed `--force`) builds none, and one removed from the manifest none at all. Every
        // apply looks, whatever its manifest uploads: in the downloads' listing of the cache
        // folder where there is one.
        if index?.mayHoldArchives ?? true {
            cache.removeLeftoverArchives(olderThan: CacheLock.isHeld(directory: cache.directory) ? nil : 600)
        }
        let leftovers = LeftoverIndex()
        let obstacles = FolderObstacles()
        // Each worker takes a turn before its next entry and keeps it from one entry to the next
        // unless a slow step (a flush, a hash, an unpack, a copy) gives it back
        // (`Downloader.turn`); the other workers take the turns given back meanwhile
        // (`turnCount`: with jobs below 16, every worker has one).
        let results = await Self.mapBounded(await listedEntries(), width: jobs + Self.finishing,
                                            worker: { Slot(semaphore: self.turns) },
                                            before: { await $0.acquire() }, after: { await $0.release() }) { turn, entry -> ItemResult in
            let result: ItemResult
            switch entry {
            case .upload(let upload) where Task.isCancelled:
                // Not even planned: planning may zip a whole folder.
                var item = PlanItem(kind: .upload, index: upload.index, url: self.redactor.scrub(upload.url.written),
                                    to: "", action: .upload, size: nil, offset: 0, bytes: nil, reason: "interrupted")
                item.from = upload.from
                result = ItemResult(item: item, outcome: .interrupted(.beforeStart), transferred: 0, seconds: 0,
                                    notes: [])
            case .unlisted(let download, let failure):
                let outcome: ItemResult.Outcome = failure.isInterruption ? .interrupted(.whileAsking)
                    : .failed(failure.scrubbed(self.redactor))
                result = ItemResult(item: self.unlistedItem(download, failure), outcome: outcome, transferred: 0,
                                    seconds: 0, notes: [])
            case .download(let download) where cacheProblem != nil:
                let failure = SyncError.file(cacheProblem!)
                result = ItemResult(item: self.unlistedItem(download, failure), outcome: .failed(failure.scrubbed(self.redactor)),
                                    transferred: 0, seconds: 0, notes: [])
            case .download(let download):
                let key = Cache.key(for: download)
                let (item, nothingCached, unpackedBefore) = await self.applyItem(download, key: key, index: index,
                                                                                   leftovers: leftovers, obstacles: obstacles,
                                                                                   reporter: reporter)
                var downloader = self.downloader(download, item.noting(download.settings), key: key, turn: turn,
                                                 reporter: reporter)
                downloader.nothingCached = nothingCached
                downloader.unpackedBefore = unpackedBefore
                downloader.leftovers = leftovers
                downloader.unreachable = self.unreachable
                result = await downloader.run()
            case .upload(let upload):
                var planner = self.uploadPlanner
                planner.prefetchPartDigests = true
                // Planning may hash or zip a whole folder: another worker's turn meanwhile.
                await turn.release()
                let item = await planner.plan(upload).noting(upload.settings)
                await self.slots.acquire()
                var uploader = Uploader(upload: upload, item: item, cache: self.cache, engine: self.engine,
                                        redactor: self.redactor, reporter: reporter.map(ProgressGate.init), jobs: self.jobs)
                uploader.unreachable = self.unreachable
                result = await uploader.run()
                await self.slots.release()
            }
            reporter?.report(.finished(result: result))
            // The report keeps every entry's result to the end of the run: without the
            // server's answer (three strings), which the finished event above still carried.
            var kept = result
            kept.item.remote = nil
            return kept
        }
        var warnings = await folders.syncAll().map(RunWarning.folderNotFlushed)
        // The run's records reach the disk in one flush. One that fails costs, at worst, the
        // records of this run after a power cut: those files are downloaded again.
        do {
            try cache.finishRecords()
        } catch {
            warnings.append(.recordsNotFlushed(error))
        }
        let elapsed = clock.now - start
        return ApplyReport(results: results,
                           seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                           warnings: warnings)
    }


    /// The plan item of a prefix download that could not be listed, or of an object of it that
    /// cannot be written.
    func unlistedItem(_ download: Download, _ failure: SyncError) -> PlanItem {
        var item = PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to,
                            action: .error, size: nil, offset: 0, bytes: nil, reason: "").failing(failure, redactor)
        item.object = download.object
        return item
    }

    /// Entries in their slow last steps (a flush, a hash, an unpack, a copy) at most, beyond the
    /// `jobs` holding a network slot.
    static let finishing = 64

    private func downloader(_ download: Download, _ item: PlanItem, key: String, turn: Slot,
                            reporter: (any ProgressReporter)?) -> Downloader {
        var item = item
        item.object = download.object
        var downloader = Downloader(download: download, item: item, cache: cache, engine: engine, redactor: redactor,
                                    reporter: reporter.map(ProgressGate.init), flusher: flusher, folders: folders, slots: slots, turn: turn,
                                    key: key, requests: RequestBuilder(download: download))
        downloader.locked = locked?.entry(to: download.to).map { ($0, lockName) }
        return downloader
    }

    /// The session's reporter, and `progress` too when given (masked like every event).
    private func reporter(adding progress: (@Sendable (ProgressEvent) -> Void)?) -> (any ProgressReporter)? {
        guard let progress else { return reporter }
        let handler = ScrubbingReporter(inner: ProgressHandler(progress), redactor: redactor)
        return FanOutReporter(reporters: (reporter.map { [$0] } ?? []) + [handler])
    }
}
