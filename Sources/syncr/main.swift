#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrHTTP
import SyncrManifest

/// sysexits-style codes, as documented in `syncr help` and syncr(1).
enum ExitCode {
    static let success: Int32 = 0
    static let failures: Int32 = 1
    static let changesPending: Int32 = 2
    static let usage: Int32 = 64
    static let invalidManifest: Int32 = 65
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
    case .version:
        Output.out("syncr \(SyncrHTTPInfo.version) (\(SyncrHTTPInfo.curlVersion))")
        return ExitCode.success
    case .unzip:
        do {
            let summary = try ArchiveCommands.unzip(archive: invocation.source!, destination: invocation.target!,
                                                    stripComponents: invocation.stripComponents)
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
                                                                      jobs: invocation.jobs, force: invocation.force))
        defer { session.close() }
        let plan = await session.plan()
        if invocation.json {
            Output.out(Rendering.planJSON(plan))
        } else {
            Output.out(Rendering.planText(plan, manifest: invocation.manifest, quiet: invocation.quiet))
        }
        if plan.count(.error) > 0 { return ExitCode.failures }
        return invocation.detailedExitcode && plan.hasWork ? ExitCode.changesPending : ExitCode.success
    case .apply:
        guard let manifest = loadManifest(invocation.manifest) else { return ExitCode.invalidManifest }
        let reporter = LineReporter(quiet: invocation.quiet, total: manifest.downloads.count + manifest.uploads.count)
        let session = Session(manifest: manifest,
                              options: RunOptions(cacheDirectory: invocation.cacheDirectory, jobs: invocation.jobs,
                                                  connections: invocation.connections, force: invocation.force),
                              reporter: reporter)
        defer { session.close() }
        for warning in session.applySpaceWarnings() { Output.err("syncr: warning: \(warning)") }
        let report = await session.apply()
        if invocation.json {
            Output.out(Rendering.applyJSON(report, plan: Plan(items: report.results.map(\.item))))
        }
        let ok = report.results.filter { $0.status == .ok }.count
        let skipped = report.results.filter { $0.status == .skipped }.count
        let failed = report.failed
        let sentBytes = report.results.filter { $0.item.kind == "upload" }.reduce(0) { $0 + $1.transferred }
        Output.err("syncr: \(ok) transferred, \(skipped) up to date, \(failed.count) failed; "
            + "\(ByteSize.format(report.transferred - sentBytes)) received, \(ByteSize.format(sentBytes)) sent "
            + "in \(Rendering.seconds(report.seconds)).")
        for f in failed {
            Output.err("  failed: \(Rendering.name(f.item)): \(f.error ?? "unknown error")")
        }
        return failed.isEmpty ? ExitCode.success : ExitCode.failures
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let code: Int32
do {
    let invocation = try ArgumentParser.parse(arguments)
    code = await run(invocation)
} catch {
    Output.err("syncr: error: \(error.message)")
    Output.err("Run 'syncr help\(error.command.map { " " + $0 } ?? "")' for usage.")
    code = ExitCode.usage
}
exit(code)
