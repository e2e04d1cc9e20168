#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// What plan and apply read before they start: the manifest, its lock, the shard.
struct RunSetup {
    var manifest: Manifest
    var options: RunOptions
    /// The SHA-256 of the manifest's bytes that were parsed, which reports name.
    var manifestSHA256: String?

    /// Loads what `flags` name; prints the problem and gives the exit code when it cannot.
    /// - Parameter hashManifest: a report will name the manifest (`manifestSHA256`); a run
    ///   without one does not hash it.
    /// - Parameter reports: apply's `--report` and `--junit` (flag, path): one that names a
    ///   download, an upload's source, the cache, a folder or a missing folder is refused as
    ///   soon as the manifest is read, before any other check (`ReportPaths`; the failure then
    ///   keeps the earlier reports: removing them would remove the download or the upload).
    ///   Only a `--cache` that cannot be a folder is refused sooner, before the manifest.
    static func load(_ flags: RunFlags, connections: Int? = nil, hashManifest: Bool = false,
                     reports: [(flag: String, path: String)] = []) async -> Result<RunSetup, ExitFailure> {
        if let code = CacheOption.refuse(flags.cacheDirectory) {
            // Refused before the reports are checked: an earlier one may be a download's file.
            var failure = ExitFailure(code)
            failure.keepsReports = true
            return .failure(failure)
        }
        let path = Lockfile.path(forManifest: flags.manifest)
        let wantsLock = flags.shard != nil || flags.locked
        // The lock is read while the manifest is parsed: at 100,000 entries each takes a second.
        async let lockRead = wantsLock
            ? Result<Lockfile?, LockfileError>(catching: { () throws(LockfileError) in try LockfileReader.load(path: path) })
            : .success(nil)
        // libcurl and libcrypto are set up on the other core meanwhile too: a run of small files
        // would wait for them before its first request.
        async let prepared: Void = ProcessSetup.warmUp()
        var manifestSHA256: String?
        guard let manifest = loadManifest(flags.manifest, usesCache: flags.cacheDirectory == nil, read: { if hashManifest { manifestSHA256 = ManifestIdentity.sha256(of: $0) } }) else {
            _ = await lockRead
            return .failure(ExitFailure(ExitCode.invalidManifest))
        }
        let cache = flags.cacheDirectory.map(Manifest.resolvedPath) ?? manifest.cacheDirectory
        for (flag, path) in reports {
            guard let problem = ReportPaths.problem(path, manifest: manifest, cache: cache) else { continue }
            Output.err("syncr: error: \(flag) \(Rendering.printable(path)): \(problem)")
            _ = await lockRead
            var failure = ExitFailure(ExitCode.usage)
            failure.keepsReports = true
            return .failure(failure)
        }
        var options = RunOptions(cacheDirectory: flags.cacheDirectory, jobs: flags.jobs, connections: connections,
                                 force: flags.force, fsync: flags.noFsync ? false : nil)
        if let cache = flags.cacheDirectory {
            if let code = CacheOption.refuse(cache, for: manifest) { return .failure(ExitFailure(code)) }
            // As the manifest's own cache: is checked when it is read.
            let clashes = manifest.downloads(clashingWithCache: cache)
            let folder = Manifest.resolvedPath(cache)
            for d in clashes {
                let what = d.unzip ? "is unpacked over it or into it"
                    : d.s3?.isPrefix == true ? "mirrors an s3:// prefix over it or into it"
                    : folder.hasPrefix(d.destination + "/") ? "writes a file where a folder above it is" : "writes into it"
                Output.err("syncr: error: --cache \(cache): downloads[\(d.index)] (\(Rendering.printable(d.to))) "
                    + what + "; give the cache a folder of its own")
            }
            if !clashes.isEmpty { return .failure(ExitFailure(ExitCode.usage)) }
        }
        switch flags.shard {
        case .fixed(let shard)?:
            // Said as auto's is: apply's summary counts only the shard's entries.
            if !flags.quiet { Output.err("syncr: shard \(shard) (--shard \(shard))") }
            options.shard = shard
        case .auto?:
            do {
                let (shard, said) = try ShardEnvironment.resolve(environment())
                if !flags.quiet { Output.err("syncr: shard \(shard) (--shard auto: \(said))") }
                options.shard = shard
            } catch {
                Output.err("syncr: error: \(error.message)")
                return .failure(ExitFailure(ExitCode.usage))
            }
        case nil: break
        }
        if wantsLock {
            // Every machine must split the manifest alike: a lock beside it balances by bytes.
            switch await lockRead {
            case .success(let lock): options.lock = lock
            case .failure(let error):
                Output.err(error.description)
                return .failure(ExitFailure(ExitCode.invalidManifest))
            }
            // Another manifest's lock (`data.yaml`'s, for `data.yml`) would pin other entries,
            // or split this manifest by that one's sizes.
            if let lock = options.lock, let problem = LockCheck.ownerProblem(lock, lockPath: path, manifestPath: flags.manifest) {
                Output.err("syncr: error: \(flags.locked ? "--locked" : "--shard"): " + Rendering.printable(problem))
                return .failure(ExitFailure(ExitCode.invalidManifest))
            }
            if flags.locked {
                guard options.lock != nil else {
                    Output.err("syncr: error: --locked: there is no \(path) beside \(flags.manifest); "
                        + "run 'syncr lock\(flags.manifest == "syncr.yml" ? "" : " " + flags.manifest)' to write it")
                    return .failure(ExitFailure(ExitCode.invalidManifest))
                }
                options.locked = true
            }
        }
        await prepared
        return .success(RunSetup(manifest: manifest, options: options, manifestSHA256: manifestSHA256))
    }

    /// The session of the run; nil (the problems printed) when a locked run's manifest has
    /// downloads its lock does not cover.
    func session(reporter: (any ProgressReporter)? = nil) -> Session? {
        let session = Session(manifest: manifest, options: options, reporter: reporter)
        let problems = session.lockProblems()
        guard problems.isEmpty else {
            for p in problems { Output.err("syncr: error: --locked: " + p) }
            session.close()
            return nil
        }
        return session
    }
}

/// An exit code chosen before the run started, the reason already printed.
struct ExitFailure: Error {
    var code: Int32
    /// The earlier report files must stay: a report path names a download, or the run was
    /// refused before the report paths were checked.
    var keepsReports = false
    init(_ code: Int32) { self.code = code }
}

/// `syncr plan`: asks every server, prints the plan.
enum PlanCommand {
    static func run(_ options: PlanOptions) async -> Int32 {
        let flags = options.run
        let setup: RunSetup
        switch await RunSetup.load(flags) {
        case .success(let s): setup = s
        case .failure(let failure): return failure.code
        }
        guard let session = setup.session() else { return ExitCode.invalidManifest }
        defer { session.close() }
        let plan = await session.plan()
        if Task.isCancelled { return ExitCode.failures }  // interrupted: the caller exits 130/143
        if flags.json {
            Output.out(Rendering.planJSON(plan))
        } else {
            Output.out(Rendering.planText(plan, manifest: flags.manifest, quiet: flags.quiet))
        }
        if plan.count(.error) > 0 { return ExitCode.failures }
        return options.detailedExitcode && plan.hasWork ? ExitCode.changesPending : ExitCode.success
    }
}

/// `syncr apply`: carries the plan out under the cache lock, with progress and reports.
enum ApplyCommand {
    /// A report of an earlier run must not pass for this one's: a run refused (an invalid
    /// manifest, a cache another run holds) leaves none (CI publishes what it finds). Called
    /// once the reports are known not to name a download.
    static func removeEarlierReports(_ options: ApplyOptions) {
        for path in [options.reportPath, options.junitPath].compactMap({ $0 }) where unlink(path) != 0 && errno != ENOENT {
            Output.err("syncr: warning: cannot remove the earlier report \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func run(_ options: ApplyOptions) async -> Int32 {
        let flags = options.run
        let setup: RunSetup
        let reports = flags.json || options.reportPath != nil || options.junitPath != nil
        let reportPaths = [("--report", options.reportPath), ("--junit", options.junitPath)].compactMap { flag, path in
            path.map { (flag: flag, path: $0) }
        }
        switch await RunSetup.load(flags, connections: options.connections, hashManifest: reports, reports: reportPaths) {
        case .success(let s): setup = s
        case .failure(let failure):
            if !failure.keepsReports { removeEarlierReports(options) }
            return failure.code
        }
        removeEarlierReports(options)
        let reporter = DeferredReporter()
        guard let session = setup.session(reporter: reporter) else { return ExitCode.invalidManifest }
        let manifest = session.manifest
        defer { session.close() }
        var lock: CacheLock?
        if !manifest.downloads.isEmpty || !manifest.uploads.isEmpty {
            switch await CacheLocking.acquire(directory: session.cache.directory,
                                              timeoutMilliseconds: options.lockTimeoutMilliseconds,
                                              quiet: flags.quiet, canWait: true) {
            case .locked(let held): lock = held
            case .failed(let code): return code
            }
        }
        defer { lock?.release() }
        let warnings = session.applyWarnings()
        for warning in warnings { Output.err("syncr: warning: \(warning)") }
        // Only now may a bar take over the terminal: nothing else prints until the run ends.
        // Counted with each s3:// prefix as its objects (listed now; apply takes that listing).
        let items = await session.itemCount()
        reporter.attach(ApplyOutput.reporter(options, entryCount: items,
                                             terminal: TerminalInfo.stderr(environment: environment())))
        // On Ctrl-C the bar makes way for the notice and the lines that follow.
        Signals.onFirstSignal { _ in reporter.finish() }
        let report = await session.apply()
        reporter.finish()
        let origin = ReportOrigin(manifestPath: flags.manifest, sharding: session.sharding,
                                  manifestSHA256: setup.manifestSHA256)
        let code = ApplyOutput.finish(report, options: options, origin: origin, warnings: warnings)
        Signals.reportInterrupted(report)
        return code
    }
}
