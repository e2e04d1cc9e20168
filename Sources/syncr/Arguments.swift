#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// A command line that could not be understood: exits 64 (EX_USAGE).
struct UsageError: Error {
    var message: String
    /// The command whose usage to point at, if known.
    var command: String?
    /// Print the overview after the message, rather than point at 'syncr help'.
    var showsOverview = false
}

/// The commands syncr knows.
enum CommandName: String, CaseIterable {
    case validate, plan, apply, zip, unzip, version, help
    case initialize = "init", cache, completions, lock, report

    /// The words that name a subcommand after this command (`cache prune`, `report merge`):
    /// `syncr help cache prune` takes them, and the completions offer them.
    var subcommands: [String] {
        switch self {
        case .cache: ["prune"]
        case .report: ["merge"]
        default: []
        }
    }
}

/// One option: its spelling, whether it takes a value, and the commands that accept it.
struct OptionSpec {
    var name: String
    var takesValue: Bool
    var commands: Set<CommandName>
}

/// The words of a command line sorted into options and positionals, before any command makes
/// sense of them: each command then builds its own options from this (`Command`).
struct ParsedLine {
    var command: CommandName
    /// Options given, with their values (`""` for a flag); a repeated option keeps the last.
    var given: [String: String] = [:]
    var positionals: [String] = []

    func flag(_ name: String) -> Bool { given[name] != nil }
    func value(_ name: String) -> String? { given[name] }

    func usage(_ message: String) -> UsageError { UsageError(message: message, command: command.rawValue) }

    /// A whole number from `range`, or nil when the option was not given.
    func integer(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let n = Int(text), range.contains(n) else {
            throw usage("'\(name)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'.")
        }
        return n
    }

    /// A non-empty value (a file or folder name), or nil when the option was not given.
    func name(_ option: String, _ what: String) throws(UsageError) -> String? {
        guard let text = value(option) else { return nil }
        guard !text.isEmpty else { throw usage("'\(option)' needs \(what).") }
        return text
    }
}

/// A small parser in the spirit of swift-argument-parser: `--opt value` and `--opt=value`,
/// `--` ends options, unknown names get a did-you-mean, and each command checks its own.
enum ArgumentParser {
    static let options: [OptionSpec] = [
        OptionSpec(name: "--json", takesValue: false, commands: [.plan, .apply, .version]),
        OptionSpec(name: "--detailed-exitcode", takesValue: false, commands: [.plan]),
        OptionSpec(name: "--cache", takesValue: true, commands: [.plan, .apply, .cache, .lock]),
        OptionSpec(name: "--jobs", takesValue: true, commands: [.plan, .apply, .lock]),
        OptionSpec(name: "--connections", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--force", takesValue: false, commands: [.plan, .apply]),
        OptionSpec(name: "--no-fsync", takesValue: false, commands: [.plan, .apply]),
        OptionSpec(name: "--lock-timeout", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--strip-components", takesValue: true, commands: [.unzip]),
        OptionSpec(name: "--replace", takesValue: false, commands: [.unzip]),
        OptionSpec(name: "--max-unpacked-size", takesValue: true, commands: [.unzip]),
        OptionSpec(name: "--deterministic", takesValue: false, commands: [.zip]),
        OptionSpec(name: "--older-than", takesValue: true, commands: [.cache]),
        OptionSpec(name: "--dry-run", takesValue: false, commands: [.cache]),
        OptionSpec(name: "--quiet", takesValue: false, commands: [.validate, .plan, .apply, .zip, .unzip, .cache, .lock]),
        OptionSpec(name: "--progress", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--progress-interval", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--report", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--junit", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--shard", takesValue: true, commands: [.plan, .apply]),
        OptionSpec(name: "--locked", takesValue: false, commands: [.plan, .apply]),
        OptionSpec(name: "--hash", takesValue: false, commands: [.lock]),
        OptionSpec(name: "--output", takesValue: true, commands: [.report]),
        OptionSpec(name: "--help", takesValue: false, commands: Set(CommandName.allCases)),
    ]

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let line = try split(arguments) else { return .help(topic: .help) }
        if line.flag("--help") { return .help(topic: line.command) }
        return try command(line)
    }

    /// The command word, then options and positionals; nil when only help was asked for.
    static func split(_ arguments: [String]) throws(UsageError) -> ParsedLine? {
        var args = arguments[...]
        // No command at all is a mistake (a script that lost its command word), not a request
        // for help: a script must not take it for success.
        guard let first = args.first else { throw UsageError(message: "Missing command.", showsOverview: true) }
        guard first != "--help", first != "-h" else { return nil }
        // `--version` and `-V` spell the command `version`, options included (`syncr -V --json`).
        let word = first == "--version" || first == "-V" ? CommandName.version.rawValue : first
        if word.hasPrefix("-") {
            throw UsageError(message: "expected a command before '\(first)' (validate, plan, apply, version or help)")
        }
        guard let command = CommandName(rawValue: word) else {
            throw UsageError(message: "Unknown command '\(first)'." + didYouMean(first, CommandName.allCases.map(\.rawValue)))
        }
        args.removeFirst()
        var line = ParsedLine(command: command)
        var optionsEnded = false
        while let arg = args.popFirst() {
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                line.positionals.append(arg)
                continue
            }
            if arg == "--" { optionsEnded = true; continue }
            if arg == "-h" { line.given["--help"] = ""; continue }
            // Messages name the option as it was typed (`-o`, not `--output`).
            var typed = arg
            var inlineValue: String?
            if let eq = arg.firstIndex(of: "=") {
                typed = String(arg[..<eq])
                inlineValue = String(arg[arg.index(after: eq)...])
            }
            let name = typed == "-o" ? "--output" : typed
            guard let spec = options.first(where: { $0.name == name }) else {
                let valid = options.filter { $0.commands.contains(command) }.map(\.name)
                throw line.usage("Unknown option '\(typed)'." + didYouMean(typed, valid))
            }
            guard spec.commands.contains(command) else {
                throw line.usage("'\(typed)' does not apply to '\(command.rawValue)'.")
            }
            if spec.takesValue {
                line.given[name] = try value(of: typed, inline: inlineValue, next: &args, line: line)
            } else {
                if inlineValue != nil { throw line.usage("'\(typed)' takes no value.") }
                line.given[name] = ""
            }
        }
        return line
    }

    /// An option's value: after `=`, or the next word, unless that word is an option itself
    /// (`--report --json` wrote the report to a file named `--json` and printed no JSON).
    private static func value(of option: String, inline: String?, next args: inout ArraySlice<String>,
                              line: ParsedLine) throws(UsageError) -> String {
        if let inline { return inline }
        guard let word = args.first else { throw line.usage("Missing value for '\(option)'.") }
        if word.hasPrefix("-") && word != "-" {
            throw line.usage("Missing value for '\(option)': '\(word)' is an option (for a value that starts "
                + "with '-', write \(option)=\(word)).")
        }
        return args.removeFirst()
    }

    /// Each command makes its options from the line, checking values and positionals.
    static func command(_ line: ParsedLine) throws(UsageError) -> Command {
        switch line.command {
        case .help: return .help(topic: try helpTopic(line))
        case .version:
            if let extra = line.positionals.first { throw line.usage("Unexpected argument '\(extra)'.") }
            return .version(VersionOptions(json: line.flag("--json")))
        case .zip:
            let (source, output) = try two(line, "SRC_DIR", "OUT.zip")
            return .zip(ZipOptions(source: source, output: output, deterministic: line.flag("--deterministic"),
                                   quiet: line.flag("--quiet")))
        case .unzip: return .unzip(try unzipOptions(line))
        case .validate:
            return .validate(ValidateOptions(manifest: try manifest(line), quiet: line.flag("--quiet")))
        case .plan:
            return .plan(PlanOptions(run: try runFlags(line), detailedExitcode: line.flag("--detailed-exitcode")))
        case .apply: return .apply(try applyOptions(line))
        case .initialize: return .initialize(try InitCommand.options(line))
        case .cache: return .cache(try CacheCommand.options(line))
        case .completions: return .completions(try Completions.shell(line))
        case .report: return .report(try ReportCommand.options(line))
        case .lock:
            return .lock(LockOptions(manifest: try manifest(line), hash: line.flag("--hash"),
                                     cacheDirectory: try line.name("--cache", "a folder"),
                                     jobs: try line.integer("--jobs", 1...256), quiet: line.flag("--quiet")))
        }
    }

    /// `help [COMMAND [SUBCOMMAND]]`: a subcommand's help is its command's, as
    /// `syncr report merge --help` prints it (`syncr help report merge` was refused).
    static func helpTopic(_ line: ParsedLine) throws(UsageError) -> CommandName {
        let words = line.positionals
        guard let topic = words.first else { return .help }
        guard let name = CommandName(rawValue: topic) else {
            throw UsageError(message: "Unknown command '\(topic)'." + didYouMean(topic, CommandName.allCases.map(\.rawValue)))
        }
        guard words.count > 1 else { return name }
        let subcommand = words[1]
        guard !name.subcommands.isEmpty else {
            throw line.usage("'\(topic)' has no subcommands: 'syncr help \(topic)' shows its help.")
        }
        guard name.subcommands.contains(subcommand) else {
            throw line.usage("Unknown subcommand '\(subcommand)' of '\(topic)': it has "
                + name.subcommands.map { "'\($0)'" }.joined(separator: ", ") + "." + didYouMean(subcommand, name.subcommands))
        }
        if words.count > 2 { throw line.usage("Unexpected argument '\(words[2])': 'help' takes a command and its subcommand.") }
        return name
    }

    /// Whether two paths name one file (the same device and inode), as the system resolves them.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// Whether two paths name one file: the same once resolved against the current folder
    /// (neither need exist yet), or the same device and inode.
    static func samePlace(_ a: String, _ b: String) -> Bool {
        Manifest.resolvedPath(a) == Manifest.resolvedPath(b) || sameFile(a, b)
    }

    /// The one optional MANIFEST of validate, plan and apply.
    static func manifest(_ line: ParsedLine) throws(UsageError) -> String {
        if line.positionals.count > 1 {
            throw line.usage("Unexpected argument '\(line.positionals[1])': give one manifest.")
        }
        return line.positionals.first ?? "syncr.yml"
    }

    /// The two positionals of zip and unzip.
    static func two(_ line: ParsedLine, _ first: String, _ second: String) throws(UsageError) -> (String, String) {
        let p = line.positionals
        guard p.count == 2 else {
            throw line.usage(p.count < 2 ? "'\(line.command.rawValue)' needs \(first) and \(second)." : "Unexpected argument '\(p[2])'.")
        }
        return (p[0], p[1])
    }

    static func unzipOptions(_ line: ParsedLine) throws(UsageError) -> UnzipOptions {
        let (archive, destination) = try two(line, "ARCHIVE", "DEST_DIR")
        var options = UnzipOptions(archive: archive, destination: destination, replace: line.flag("--replace"),
                                   quiet: line.flag("--quiet"))
        if let text = line.value("--strip-components") {
            guard let n = Int(text), (0...64).contains(n) else {
                throw line.usage("'--strip-components' takes a whole number from 0 to 64, not '\(text)'.")
            }
            options.stripComponents = n
        }
        if let text = line.value("--max-unpacked-size") {
            guard let bytes = ByteSize.parse(text), bytes > 0 else {
                throw line.usage("'--max-unpacked-size' takes a size like 512MiB or 2GiB, not '\(text)'.")
            }
            options.maxUnpackedSize = bytes
        }
        return options
    }

    static func runFlags(_ line: ParsedLine) throws(UsageError) -> RunFlags {
        RunFlags(manifest: try manifest(line), json: line.flag("--json"),
                 cacheDirectory: try line.name("--cache", "a folder"), jobs: try line.integer("--jobs", 1...256),
                 force: line.flag("--force"), noFsync: line.flag("--no-fsync"), quiet: line.flag("--quiet"),
                 shard: try shard(line), locked: line.flag("--locked"))
    }

    /// `--shard I/N` (1-based) or `--shard auto`.
    static func shard(_ line: ParsedLine) throws(UsageError) -> ShardRequest? {
        guard let text = line.value("--shard") else { return nil }
        if text == "auto" { return .auto }
        guard let shard = Shard(text) else {
            throw line.usage("'--shard' takes I/N with 1 <= I <= N (such as 2/4), or auto, not '\(text)'.")
        }
        return .fixed(shard)
    }

    static func applyOptions(_ line: ParsedLine) throws(UsageError) -> ApplyOptions {
        var options = ApplyOptions(run: try runFlags(line), connections: try line.integer("--connections", 1...64),
                                   reportPath: try line.name("--report", "a file name"),
                                   junitPath: try line.name("--junit", "a file name"))
        // A report written over the manifest or its lockfile would leave the next run nothing
        // to read; two reports in one file keep only the last.
        let lockfile = Lockfile.path(forManifest: options.run.manifest)
        for (flag, path) in [("--report", options.reportPath), ("--junit", options.junitPath)] {
            guard let path else { continue }
            if sameFile(path, options.run.manifest) {
                throw line.usage("'\(flag)' names the manifest itself ('\(path)'); give the report a file of its own.")
            }
            if samePlace(path, lockfile) {
                throw line.usage("'\(flag)' names the manifest's lockfile ('\(path)'); give the report a file of its own.")
            }
        }
        if let report = options.reportPath, let junit = options.junitPath, samePlace(report, junit) {
            throw line.usage("'--report' and '--junit' name one file ('\(junit)'); give each report a file of its own.")
        }
        if let text = line.value("--lock-timeout") {
            guard let ms = text == "0" ? 0 : DurationText.parse(text) else {
                throw line.usage("'--lock-timeout' takes a duration such as 30s, 5m or 1h30m, not '\(text)'.")
            }
            options.lockTimeoutMilliseconds = ms
        }
        if let text = line.value("--progress") {
            guard let mode = ProgressMode(rawValue: text) else {
                throw line.usage("'--progress' takes auto, bar, plain or none, not '\(text)'."
                    + didYouMean(text, ProgressMode.allCases.map(\.rawValue)))
            }
            options.progress = mode
        }
        // Two wishes that cannot both be met: which one was meant only the user knows (a bar or
        // progress lines asked for beside --quiet were shown, or silently dropped). With auto
        // (the default) --quiet simply means no progress, and none agrees with it.
        if options.run.quiet && (options.progress == .bar || options.progress == .plain) {
            let asked = options.progress == .bar ? "a bar" : "progress lines"
            throw line.usage("'--quiet' shows no progress and '--progress \(options.progress.rawValue)' asks for \(asked); "
                + "give one of them.")
        }
        if let text = line.value("--progress-interval") {
            guard let ms = DurationText.parse(text), ms >= 100 else {
                throw line.usage("'--progress-interval' takes a duration of at least 100ms, such as 10s, "
                    + "500ms or 1m, not '\(text)'.")
            }
            options.progressIntervalMilliseconds = ms
        }
        return options
    }

    /// `" Did you mean 'x'?"`, or nothing when no candidate is close.
    static func didYouMean(_ word: String, _ candidates: [String]) -> String {
        Suggest.closest(to: word, among: candidates).map { " Did you mean '\($0)'?" } ?? ""
    }
}

/// "Did you mean" by edit distance.
enum Suggest {
    static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
