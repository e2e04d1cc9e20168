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

/// - Parameter headersUnexpanded: for commands that send no request: a header may reference a
///   variable that is not set (`ManifestLoader.load`).
/// - Parameter read: given the bytes that were parsed (`ManifestLoader.load`).
/// - Parameter usesCache: the run uses the manifest's `cache:` (no `--cache`): a path there
///   that cannot be a folder makes the manifest invalid, as `--cache` there is a usage error.
func loadManifest(_ path: String, headersUnexpanded: Bool = false, usesCache: Bool = true,
                  read: (([UInt8]) -> Void)? = nil) -> Manifest? {
    let cacheProblem: ((String) -> String?)? = usesCache ? { CacheOption.problem($0) } : nil
    do {
        return try ManifestLoader.load(path: path, environment: environment(), headersUnexpanded: headersUnexpanded,
                                       read: read, cacheFolderProblem: cacheProblem)
    } catch {
        Output.err(error.description)
        let count = error.diagnostics.count
        if count > 1 { Output.err("\(count) errors in \(path)") }
        return nil
    }
}

func run(_ command: Command) async -> Int32 {
    switch command {
    case .help(let topic):
        Output.out(Help.text(for: topic))
        return ExitCode.success
    case .initialize(let options): return InitCommand.run(options)
    case .cache(let options): return await CacheCommand.run(options)
    case .completions(let shell): return Completions.run(shell)
    case .version(let options): return VersionCommand.run(options)
    case .unzip(let options): return ArchiveCommand.unzip(options)
    case .zip(let options): return ArchiveCommand.zip(options)
    case .validate(let options): return validate(options)
    case .plan(let options): return await PlanCommand.run(options)
    case .apply(let options): return await ApplyCommand.run(options)
    case .lock(let options): return await LockCommand.run(options)
    case .report(let options): return ReportCommand.run(options)
    }
}

func validate(_ options: ValidateOptions) -> Int32 {
    guard let manifest = loadManifest(options.manifest) else { return ExitCode.invalidManifest }
    if !options.quiet {
        let d = manifest.downloads.count, u = manifest.uploads.count
        Output.out("\(options.manifest): valid (\(d) download\(d == 1 ? "" : "s"), \(u) upload\(u == 1 ? "" : "s"))")
    }
    return ExitCode.success
}

ProcessSetup.prepare()
// A reader of stdout that goes away (`syncr apply --json | head -1`) makes writes fail with
// EPIPE, which Output notes and the exit code says, instead of a SIGPIPE killing the run
// before it wrote its --report and --junit files.
signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
let code: Int32
do {
    let command = try ArgumentParser.parse(arguments)
    let work = Task { await run(command) }
    if command.stopsOnSignal {
        // zip and unzip stop within one block or piece, and remove what they had half made.
        let applies = command.name == .apply
        let notice: @Sendable (Int32) -> String = { applies ? Signals.applyNotice($0) : "syncr: interrupted" }
        Signals.install(notice: notice) { _ in work.cancel() }
        // A second signal exits at once: show the cursor the bar hid (async-signal-safe).
        TerminalBar.prepare()
        Signals.emergency = { TerminalBar.emergencyRestore() }
    }
    var status = await work.value
    if let failure = Output.stdoutFailure, status == ExitCode.success || status == ExitCode.changesPending {
        // What was printed is not all there: a script reading it must not take it for whole.
        Output.err("syncr: error: cannot write to standard output: \(failure)")
        status = ExitCode.failures
    }
    code = Signals.received.map(Signals.exitCode(for:)) ?? status
} catch {
    Output.err("syncr: error: \(error.message)")
    if error.showsOverview {
        Output.err(Help.text(for: .help))
    } else {
        Output.err("Run 'syncr help\(error.command.map { " " + $0 } ?? "")' for usage.")
    }
    code = ExitCode.usage
}
exit(code)
