#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// sysexits-style codes, as documented in `syncr help` and syncr(1).
enum ExitCode {
    static let success: Int32 = 0
    static let failures: Int32 = 1
    static let changesPending: Int32 = 2
    static let usage: Int32 = 64
    static let invalidManifest: Int32 = 65
    /// EX_TEMPFAIL: another run holds the cache lock.
    static let cacheBusy: Int32 = 75
}

func environment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let eq = text.firstIndex(of: "=") {
            result[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        pointer += 1
    }
    return result
}

func loadManifest(_ path: String) -> Manifest? {
    do {
        return try ManifestLoader.load(path: path, environment: environment())
    } catch {
        Output.err(error.description)
        let count = error.diagnostics.count
        if count > 1 { Output.err("\(count) errors in \(path)") }
        return nil
    }
}

func run(_ invocation: Invocation) async -> Int32 {
    if invocation.showHelp || invocation.command == .help {
        Output.out(Help.text(for: invocation.helpTopic ?? (invocation.showHelp ? invocation.command : .help)))
        return ExitCode.success
    }
    switch invocation.command {
    case .help:
        return ExitCode.success
    case .initialize:
        return InitCommand.run(invocation)
    case .cache:
        return await CacheCommand.run(invocation)
    case .completions:
        return Completions.run(invocation)
    case .version:
        return VersionCommand.run(invocation)
    case .unzip:
        do {
            let summary = try ArchiveCommands.unzip(archive: invocation.source!, destination: invocation.target!,
                                                    stripComponents: invocation.stripComponents,
                                                    maxUnpackedSize: invocation.maxUnpackedSize)
            if !invocation.quiet {
                Output.err("syncr: unpacked \(summary.entries) entries (\(summary.files) files, "
                    + "\(ByteSize.format(summary.bytes))) into \(invocation.target!)")
            }
            return ExitCode.success
        } catch {
            Output.err("syncr: error: \(error.description)")
            return ExitCode.failures
        }
    case .zip:
        do {
            let summary = try ArchiveCommands.zip(directory: invocation.source!, output: invocation.target!,
                                                  deterministic: invocation.deterministic)
            if !invocation.quiet {
                Output.err("syncr: wrote \(invocation.target!): \(summary)")
            }
            return ExitCode.success
        } catch {
            Output.err("syncr: error: \(error.description)")
            return ExitCode.failures
        }
    case .validate:
        guard let manifest = loadManifest(invocation.manifest) else { return ExitCode.invalidManifest }
        if !invocation.quiet {
            let d = manifest.downloads.count, u = manifest.uploads.count
            Output.out("\(invocation.manifest): valid (\(d) download\(d == 1 ? "" : "s"), \(u) upload\(u == 1 ? "" : "s"))")
        }
        return ExitCode.success
    case .plan:
        guard let manifest = loadManifest(invocation.manifest) else { return ExitCode.invalidManifest }
        let session = Session(manifest: manifest, options: RunOptions(cacheDirectory: invocation.cacheDirectory,
                                                                      jobs: invocation.jobs, force: invocation.force,
                                                                      fsync: invocation.noFsync ? false : nil))
        defer { session.close() }
        let plan = await session.plan()
        if Task.isCancelled { return ExitCode.failures }  // interrupted: the caller exits 130/143
        if invocation.json {
            Output.out(Rendering.planJSON(plan))
        } else {
            Output.out(Rendering.planText(plan, manifest: invocation.manifest, quiet: invocation.quiet))
        }
        if plan.count(.error) > 0 { return ExitCode.failures }
        return invocation.detailedExitcode && plan.hasWork ? ExitCode.changesPending : ExitCode.success
    case .apply:
        guard let manifest = loadManifest(invocation.manifest) else { return ExitCode.invalidManifest }
        let reporter = DeferredReporter()
        let session = Session(manifest: manifest,
                              options: RunOptions(cacheDirectory: invocation.cacheDirectory, jobs: invocation.jobs,
                                                  connections: invocation.connections, force: invocation.force,
                                                  fsync: invocation.noFsync ? false : nil),
                              reporter: reporter)
        defer { session.close() }
        var lock: CacheLock?
        if !manifest.downloads.isEmpty || !manifest.uploads.isEmpty {
            switch await CacheLocking.acquire(directory: session.cache.directory,
                                              timeoutMilliseconds: invocation.lockTimeoutMilliseconds,
                                              quiet: invocation.quiet) {
            case .locked(let held): lock = held
            case .failed(let code): return code
            }
        }
        defer { lock?.release() }
        for warning in session.applySpaceWarnings() { Output.err("syncr: warning: \(warning)") }
        // Only now may a bar take over the terminal: nothing else prints until the run ends.
        reporter.attach(ApplyOutput.reporter(invocation, entryCount: manifest.downloads.count + manifest.uploads.count,
                                             terminal: TerminalInfo.stderr(environment: environment())))
        // On Ctrl-C the bar makes way for the notice and the lines that follow.
        Signals.onFirstSignal { _ in reporter.finish() }
        let report = await session.apply()
        reporter.finish()
        let code = ApplyOutput.finish(report, invocation: invocation)
        Signals.reportInterrupted(report)
        return code
    }
}

ProcessSetup.prepare()
let arguments = Array(CommandLine.arguments.dropFirst())
let code: Int32
do {
    let invocation = try ArgumentParser.parse(arguments)
    let work = Task { await run(invocation) }
    if [.plan, .apply, .zip, .unzip].contains(invocation.command) && !invocation.showHelp {
        // zip and unzip stop within one block or piece, and remove what they had half made.
        Signals.install(notice: invocation.command == .apply ? Signals.applyNotice : "syncr: interrupted") { _ in work.cancel() }
        // A second signal exits at once: show the cursor the bar hid (async-signal-safe).
        TerminalBar.prepare()
        Signals.emergency = { TerminalBar.emergencyRestore() }
    }
    let status = await work.value
    code = Signals.received.map(Signals.exitCode(for:)) ?? status
} catch {
    Output.err("syncr: error: \(error.message)")
    Output.err("Run 'syncr help\(error.command.map { " " + $0 } ?? "")' for usage.")
    code = ExitCode.usage
}
exit(code)
