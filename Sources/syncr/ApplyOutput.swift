#if canImport(Glibc)
import Glibc
#endif
import SyncrCore

/// What `apply` shows and writes: the progress reporter while it runs, then the `--json`
/// output, the summary and the `--report` / `--junit` files.
enum ApplyOutput {
    /// The reporter `--progress` asks for, on what stderr is.
    static func reporter(_ options: ApplyOptions, entryCount: Int, terminal: TerminalInfo) -> any RunReporter {
        TerminalBar.prepare()
        let palette = Palette(enabled: terminal.colour)
        var mode = options.progress.resolved(for: terminal)
        // --quiet asks for failures and the summary only: never a bar (--progress bar with it is
        // refused by the parser).
        if options.run.quiet && options.progress == .auto { mode = .plain }
        switch mode {
        case .none:
            return SilentReporter()
        case .bar:
            return BarReporter(quiet: options.run.quiet, entryCount: entryCount, palette: palette)
        case .plain, .auto:
            return PlainReporter(quiet: options.run.quiet, entryCount: entryCount,
                                 interval: Double(options.progressIntervalMilliseconds) / 1000, palette: palette)
        }
    }

    /// Prints the results and writes the report files; returns the exit code.
    /// - Parameter warnings: those printed at the start of the run (`Session.applyWarnings()`):
    ///   the reports list them too, so that a script reading only them sees why entries failed.
    static func finish(_ report: ApplyReport, options: ApplyOptions, origin: ReportOrigin, warnings: [PlanWarning] = []) -> Int32 {
        var json: String?
        if options.run.json || options.reportPath != nil {
            let items = report.results.map(\.item)
            json = Rendering.applyJSON(report, plan: Plan(items: items, warnings: warnings), header: origin.json(items: items))
        }
        var code = report.failed.isEmpty ? ExitCode.success : ExitCode.failures
        // The files first: stdout's reader may be gone (`| head`), and they must not depend on it.
        if let path = options.reportPath, let json {
            if let problem = write(json + "\n", to: path) {
                Output.err("syncr: error: cannot write the --report file \(path): \(problem)")
                code = ExitCode.failures
            }
        }
        if let path = options.junitPath {
            if let problem = write(JUnitReport.xml(report, manifest: options.run.manifest, properties: origin.properties,
                                                   shard: origin.sharding?.shard.description, warnings: warnings), to: path) {
                Output.err("syncr: error: cannot write the --junit file \(path): \(problem)")
                code = ExitCode.failures
            }
        }
        if options.run.json, let json { Output.out(json) }
        for line in RunSummary.lines(report) { Output.err(line) }
        // After the summary, so that the last lines a CI log shows say the disk misbehaved.
        for warning in report.warnings { Output.err("syncr: warning: \(warning)") }
        return code
    }

    /// Writes `text` to a temporary file beside `path` and renames it into place, so that a
    /// reader never sees half a report; makes its folder first if it is not there. Returns what
    /// went wrong, or nil.
    static func write(_ text: String, to path: String) -> String? {
        if let problem = ReportPaths.makeFolder(of: path) { return problem }
        let temporary = path + ".syncr-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let problem = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                return problem
            }
            bytes = bytes.dropFirst(n)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(temporary)
            return problem
        }
        return nil
    }
}

/// Where a report comes from: the manifest (by its bytes' SHA-256) and the shard, so that
/// `report merge` can refuse reports of different manifests or overlapping shards.
struct ReportOrigin {
    var manifestPath: String
    var sharding: ShardRun?

    /// The SHA-256 of the manifest's bytes that were parsed (not of the file when the run
    /// ends: it may have changed, or been a pipe).
    var manifestSHA256: String?

    init(manifestPath: String, sharding: ShardRun?, manifestSHA256: String?) {
        self.manifestPath = manifestPath
        self.sharding = sharding
        self.manifestSHA256 = manifestSHA256
    }

    /// `"manifest": {"path": ..., "sha256": ...}` and, for a shard, `"shard": {...}`.
    func json(items: [PlanItem]) -> [(String, JSON)] {
        var pairs: [(String, JSON)] = [("manifest", .object([("path", .string(manifestPath)),
                                                             ("sha256", .optional(manifestSHA256))]))]
        if let sharding { pairs.append(("shard", Rendering.shardJSON(sharding, items: items))) }
        return pairs
    }

    /// The JUnit suite's properties: `syncr.manifest`, `syncr.manifest_sha256`, `syncr.shard` (I/N)
    /// and `syncr.shard_method` (how the manifest was split: `hash` or `bytes`).
    var properties: [(String, String)] {
        var pairs = [("syncr.manifest", manifestPath)]
        if let manifestSHA256 { pairs.append(("syncr.manifest_sha256", manifestSHA256)) }
        if let sharding {
            pairs.append(("syncr.shard", sharding.shard.description))
            pairs.append(("syncr.shard_method", sharding.method.rawValue))
        }
        return pairs
    }
}
