import SyncrCore
import SyncrManifest

extension RunFlags {
    /// The command-line choices that override the manifest, as the library takes them.
    func runOptions(connections: Int? = nil) -> RunOptions {
        RunOptions(cacheDirectory: cacheDirectory, jobs: jobs, connections: connections, force: force,
                   fsync: noFsync ? false : nil)
    }
}

/// `syncr plan`: asks every server, prints the plan.
enum PlanCommand {
    static func run(_ options: PlanOptions) async -> Int32 {
        let flags = options.run
        guard let manifest = loadManifest(flags.manifest) else { return ExitCode.invalidManifest }
        let session = Session(manifest: manifest, options: flags.runOptions())
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
    static func run(_ options: ApplyOptions) async -> Int32 {
        let flags = options.run
        guard let manifest = loadManifest(flags.manifest) else { return ExitCode.invalidManifest }
        let reporter = DeferredReporter()
        let session = Session(manifest: manifest, options: flags.runOptions(connections: options.connections),
                              reporter: reporter)
        defer { session.close() }
        var lock: CacheLock?
        if !manifest.downloads.isEmpty || !manifest.uploads.isEmpty {
            switch await CacheLocking.acquire(directory: session.cache.directory,
                                              timeoutMilliseconds: options.lockTimeoutMilliseconds,
                                              quiet: flags.quiet) {
            case .locked(let held): lock = held
            case .failed(let code): return code
            }
        }
        defer { lock?.release() }
        for warning in session.applySpaceWarnings() { Output.err("syncr: warning: \(warning)") }
        // Only now may a bar take over the terminal: nothing else prints until the run ends.
        reporter.attach(ApplyOutput.reporter(options, entryCount: manifest.downloads.count + manifest.uploads.count,
                                             terminal: TerminalInfo.stderr(environment: environment())))
        // On Ctrl-C the bar makes way for the notice and the lines that follow.
        Signals.onFirstSignal { _ in reporter.finish() }
        let report = await session.apply()
        reporter.finish()
        let code = ApplyOutput.finish(report, options: options)
        Signals.reportInterrupted(report)
        return code
    }
}
