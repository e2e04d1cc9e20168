#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrHTTP
import SyncrManifest

/// Command-line choices that override the manifest.
public struct RunOptions: Sendable {
    /// `--cache DIR`: the cache folder instead of the manifest's.
    public var cacheDirectory: String?
    /// `--jobs N`: files in flight instead of `defaults.jobs`.
    public var jobs: Int?
    /// `--connections N`: parallel Range requests per large file, for every entry.
    public var connections: Int?
    /// `--force`: upload even what is unchanged since the last upload.
    public var force: Bool
    /// `--no-fsync` (false): flush nothing to disk, instead of the manifest's `fsync:`.
    public var fsync: Bool?

    /// Creates options from the flags given; nil (or false) keeps the manifest's choice.
    public init(cacheDirectory: String? = nil, jobs: Int? = nil, connections: Int? = nil, force: Bool = false,
                fsync: Bool? = nil) {
        self.cacheDirectory = cacheDirectory
        self.jobs = jobs
        self.connections = connections
        self.force = force
        self.fsync = fsync
    }
}

/// One run of syncr over a manifest: plans and applies with one transfer engine, so every
/// request of the run shares connections.
public final class Session: Sendable {
    /// The manifest the run works on, with `--connections` already applied to every download.
    public let manifest: Manifest
    /// The cache folder of the run (`--cache` or the manifest's), flushing as `--no-fsync` or
    /// `fsync:` say.
    public let cache: Cache
    /// Files in flight at once: `--jobs`, else `defaults.jobs`, at least 1.
    public let jobs: Int
    /// Masks the manifest's secrets in everything the session reports: plan reasons, errors, notes
    /// and progress events.
    public let redactor: Redactor
    /// `--force` was given.
    public let force: Bool
    private let engine: TransferEngine
    private let reporter: (any ProgressReporter)?
    private let flusher = FlushPool()
    private let folders: ChangedFolders
    private let slots: AsyncSemaphore

    /// Creates a session for `manifest`; no request is made until `plan`.
    /// - Parameters:
    ///   - options: command-line choices that override the manifest.
    ///   - reporter: receives progress events, with secrets already masked; nil for none.
    public init(manifest: Manifest, options: RunOptions = RunOptions(), reporter: (any ProgressReporter)? = nil) {
        var manifest = manifest
        if let connections = options.connections {
            for i in manifest.downloads.indices { manifest.downloads[i].settings.connections = connections }
        }
        self.manifest = manifest
        force = options.force
        let flushes = options.fsync ?? manifest.defaults.fsync
        cache = Cache(directory: options.cacheDirectory ?? manifest.cacheDirectory, flushes: flushes)
        folders = ChangedFolders(flushes: flushes)
        jobs = max(1, options.jobs ?? manifest.defaults.jobs)
        let redactor = Redactor(secrets: manifest.secrets + S3Stores.secrets(of: manifest))
        self.redactor = redactor
        engine = TransferEngine(configuration: .init(maxConnectionsPerHost: manifest.defaults.maxConnectionsPerHost))
        slots = AsyncSemaphore(limit: jobs)
        self.reporter = reporter.map { ScrubbingReporter(inner: $0, redactor: redactor) }
    }

    /// Releases the transfer engine; call once at the end.
    public func close() {
        engine.shutdown()
    }

    // MARK: plan

    /// One manifest entry, download or upload.
    enum Entry: Sendable {
        case download(Download)
        case upload(Upload)
        /// An `s3://` prefix download whose objects could not be listed, and why.
        case unlisted(Download, EntryFailure)
    }

    /// Downloads first, then uploads, each in manifest order, with each `s3://` prefix download
    /// replaced by the downloads of its objects (listed now, in order).
    func listedEntries() async -> [Entry] {
        var result: [Entry] = []
        for download in manifest.downloads {
            switch await S3Listing.expand(download, engine: engine, redactor: redactor) {
            case .success(let downloads): result += downloads.map(Entry.download)
            case .failure(let failure): result.append(.unlisted(download, failure))
            }
        }
        return result + manifest.uploads.map(Entry.upload)
    }

    /// Asks every server about its file (concurrently) and decides what apply would do.
    public func plan() async -> Plan {
        let entries = await listedEntries()
        // Probes are small: run more of them at once than transfers, but keep a bound.
        let width = max(jobs, min(16, entries.count))
        let items = await Self.mapBounded(entries, width: width) { entry in
            var item: PlanItem
            switch entry {
            case .download(let download): item = await self.planItem(download).noting(download.settings)
            case .upload(let upload): item = await self.uploadPlanner.plan(upload).noting(upload.settings)
            case .unlisted(let download, let failure): item = self.unlistedItem(download, failure)
            }
            // Every reason is masked where it is made; once more here, so that no path can print
            // a secret (masking is idempotent).
            item.reason = self.redactor.scrub(item.reason)
            return item
        }
        return Plan(items: items, warnings: spaceWarnings(items), fsync: cache.flushes)
    }

    private var uploadPlanner: UploadPlanner {
        UploadPlanner(cache: cache, engine: engine, redactor: redactor, force: force)
    }

    /// - Parameter known: the entry's local facts when the caller has just read them.
    func planItem(_ download: Download, known: LocalFacts? = nil) async -> PlanItem {
        var item = PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to, action: .download,
                            size: nil, offset: 0, bytes: nil, reason: "")
        let remote: RemoteResource
        switch await probe(download) {
        case .success(let r):
            remote = r
        case .failure(let failure):
            item.action = .error
            item.probeError = failure.cause
            item.reason = redactor.scrub(failure.message)
            return item
        }
        item.remote = remote
        item.size = remote.size
        if download.unzip {
            let decision = Planner.decideUnpacked(remote: remote, local: unpackFacts(download))
            item.action = decision.action
            item.offset = decision.offset
            item.bytes = decision.bytes
            item.reason = redactor.scrub(decision.reason)
            return item
        }
        var local = known ?? localFacts(download)
        if Planner.needsDestinationDigest(checksums: download.checksums, remote: remote, local: local) {
            local.destinationDigests = try? FS.digests(of: download.destination,
                                                       algorithms: download.checksums.map(\.algorithm))
        }
        let decision = Planner.decide(checksums: download.checksums, remote: remote, local: local)
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
    /// as much as the file.
    ///
    /// - Returns: the item, and whether the cache held nothing at all for the entry (no record,
    ///   no data), so that the download has nothing to clear first.
    func applyItem(_ download: Download) async -> (PlanItem, nothingCached: Bool) {
        let local = localFacts(download)
        let nothingCached = local.state == nil && local.dataSize == nil
        let mustAsk = S3Stores.failure(url: download.url, settings: download.settings) != nil || (download.unzip
            ? local.state != nil
            : local.state != nil || local.destinationBlocked || (local.destination != nil && !download.checksums.isEmpty))
        guard !mustAsk else { return (await planItem(download, known: local), nothingCached) }
        let item = PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to,
                            action: .download, size: nil, offset: 0, bytes: nil,
                            reason: local.destination == nil ? "nothing cached" : "the destination exists but syncr has no record of it")
        return (item, nothingCached)
    }

    /// HEAD (or ranged GET) with the entry's retry policy.
    func probe(_ download: Download) async -> Result<RemoteResource, EntryFailure> {
        if let message = S3Stores.failure(url: download.url, settings: download.settings) {
            return .failure(EntryFailure(message: message))
        }
        let builder = RequestBuilder(download: download)
        let request = builder.probe()
        var retrying = Retrying(retries: download.settings.retries, index: download.index, kind: "download",
                                reporter: reporter, redactor: redactor)
        retrying.s3 = builder.s3
        do {
            return .success(try await retrying.run {
                switch await engine.probe(S3Object.resigned(request, by: builder.s3)) {
                case .success(let remote): return .done(remote)
                case .failure(let error): return .failed(await Self.explained(error, builder: builder, engine: engine), position: 0)
                }
            })
        } catch let failure as EntryFailure {
            return .failure(failure)
        } catch {
            return .failure(EntryFailure(message: "interrupted while asking the server", cause: .cancelled))
        }
    }

    /// What is on disk for an unpacked download: the record, the archive in the cache, and the
    /// folder's shape now.
    func unpackFacts(_ download: Download) -> UnpackFacts {
        let key = Cache.key(for: download.url.expanded)
        return UnpackFacts(state: cache.loadState(key), dataSize: FS.fileSize(cache.dataPath(key)),
                           tree: FolderReplace.fingerprint(download.destination),
                           destinationBlocked: [.file, .other].contains(FS.kind(download.destination)))
    }

    func localFacts(_ download: Download) -> LocalFacts {
        let key = Cache.key(for: download.url.expanded)
        var facts = LocalFacts()
        facts.state = cache.loadState(key)
        facts.dataSize = FS.fileSize(cache.dataPath(key))
        switch FS.kind(download.destination) {
        case .file: facts.destination = FS.fingerprint(download.destination)
        case .directory, .other: facts.destinationBlocked = true
        case .missing: break
        }
        return facts
    }

    // MARK: apply

    /// Plans and carries out every entry: up to `jobs` entries at once, each asked about and then
    /// fetched in one go, so the questions for some overlap with the transfers of others. Every
    /// entry runs to its end whatever happens to the others.
    ///
    /// Cancelling the calling task (SIGINT, SIGTERM) stops it: transfers end, what arrived is
    /// recorded durably, entries not started do not start, and each unfinished entry is
    /// reported `.interrupted`; entries already being flushed and moved into place finish.
    public func apply() async -> ApplyReport {
        let clock = ContinuousClock()
        let start = clock.now
        if !manifest.downloads.isEmpty { try? cache.prepare() }
        // More entries in flight than network slots: the extra ones are being flushed and moved.
        let results = await Self.mapBounded(await listedEntries(), width: jobs + Self.finishing) { entry -> ItemResult in
            let result: ItemResult
            switch entry {
            case .upload(let upload) where Task.isCancelled:
                // Not even planned: planning may zip a whole folder.
                var item = PlanItem(kind: "upload", index: upload.index, url: self.redactor.scrub(upload.url.written),
                                    to: "", action: .upload, size: nil, offset: 0, bytes: nil, reason: "interrupted")
                item.from = upload.from
                result = ItemResult(item: item, status: .interrupted, transferred: 0, seconds: 0,
                                    error: "interrupted before it started", notes: [])
            case .unlisted(let download, let failure):
                result = ItemResult(item: self.unlistedItem(download, failure), status: failure.interrupted ? .interrupted : .failed,
                                    transferred: 0, seconds: 0, error: self.redactor.scrub(failure.message), notes: [])
            case .download(let download):
                let (item, nothingCached) = await self.applyItem(download)
                var downloader = self.downloader(download, item.noting(download.settings))
                downloader.nothingCached = nothingCached
                result = await downloader.run()
            case .upload(let upload):
                let item = await self.uploadPlanner.plan(upload).noting(upload.settings)
                await self.slots.acquire()
                result = await Uploader(upload: upload, item: item, cache: self.cache, engine: self.engine,
                                        redactor: self.redactor, reporter: self.reporter).run()
                await self.slots.release()
            }
            self.reporter?.report(.finished(result: result))
            return result
        }
        await folders.syncAll()
        let elapsed = clock.now - start
        return ApplyReport(results: results,
                           seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }


    /// The plan item of a prefix download that could not be listed.
    func unlistedItem(_ download: Download, _ failure: EntryFailure) -> PlanItem {
        PlanItem(index: download.index, url: redactor.scrub(download.url.written), to: download.to, action: .error,
                 size: nil, offset: 0, bytes: nil, reason: redactor.scrub(failure.message))
    }

    /// Finished files waiting for their flush at most, beyond the `jobs` transferring.
    static let finishing = 64

    private func downloader(_ download: Download, _ item: PlanItem) -> Downloader {
        Downloader(download: download, item: item, cache: cache, engine: engine, redactor: redactor,
                   reporter: reporter, flusher: flusher, folders: folders, slots: slots,
                   key: Cache.key(for: download.url.expanded))
    }

    /// Maps with at most `width` operations in flight, keeping the input order.
    static func mapBounded<T: Sendable, R: Sendable>(_ input: [T], width: Int,
                                                      _ transform: @escaping @Sendable (T) async -> R) async -> [R] {
        await withTaskGroup(of: (Int, R).self) { group in
            var results = [R?](repeating: nil, count: input.count)
            var next = 0
            func launch() {
                guard next < input.count else { return }
                let index = next
                let value = input[index]
                group.addTask { (index, await transform(value)) }
                next += 1
            }
            for _ in 0..<min(max(1, width), input.count) { launch() }
            while let (index, result) = await group.next() {
                results[index] = result
                launch()
            }
            return results.map { $0! }
        }
    }
}
