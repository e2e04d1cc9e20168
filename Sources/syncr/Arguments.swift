import SyncrManifest

/// A command line that could not be understood: exits 64 (EX_USAGE).
struct UsageError: Error {
    var message: String
    /// The command whose usage to point at, if known.
    var command: String?
}

/// The commands syncr knows.
enum CommandName: String, CaseIterable {
    case validate, plan, apply, zip, unzip, version, help
    case initialize = "init", cache, completions
}

/// What the command line asked for.
struct Invocation {
    var command: CommandName
    var manifest = "syncr.yml"
    var json = false
    var detailedExitcode = false
    var cacheDirectory: String?
    var jobs: Int?
    var connections: Int?
    var force = false
    /// `--no-fsync`: flush nothing to disk (safe against a killed run, not a power loss).
    var noFsync = false
    var quiet = false
    /// `--lock-timeout`: how long apply waits for another run using the same cache.
    var lockTimeoutMilliseconds = 0
    /// `zip SRC OUT` / `unzip ARCHIVE DEST`.
    var source: String?
    var target: String?
    var stripComponents = 0
    /// `unzip --max-unpacked-size SIZE`: the most the archive may unpack to.
    var maxUnpackedSize: Int64?
    var deterministic = false
    /// `help COMMAND` or `COMMAND --help`.
    var helpTopic: CommandName?
    var showHelp = false
    /// `apply --progress`, `--progress-interval`, `--report FILE`, `--junit FILE`.
    var progress = ProgressMode.auto
    var progressIntervalMilliseconds = 10_000
    var reportPath: String?
    var junitPath: String?
    /// `cache prune`, `cache --older-than`, `cache --dry-run`, `completions SHELL`: see CacheCommand and Completions.
    var cacheAction: CacheCommand.Action = .list
    var olderThan: String?
    var dryRun = false
    var manifestGiven = false
    var shell: Completions.Shell?
}

/// One option: its spelling, whether it takes a value, and the commands that accept it.
struct OptionSpec {
    var name: String
    var takesValue: Bool
    var commands: Set<CommandName>
}

/// A small parser in the spirit of swift-argument-parser: `--opt value` and `--opt=value`,
/// `--` ends options, unknown names get a did-you-mean.
enum ArgumentParser {
    static let options: [OptionSpec] = [
        OptionSpec(name: "--json", takesValue: false, commands: [.plan, .apply, .version]),
        OptionSpec(name: "--detailed-exitcode", takesValue: false, commands: [.plan]),
        OptionSpec(name: "--cache", takesValue: true, commands: [.plan, .apply, .cache]),
        OptionSpec(name: "--jobs", takesValue: true, commands: [.plan, .apply]),
        OptionSpec(name: "--connections", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--force", takesValue: false, commands: [.plan, .apply]),
        OptionSpec(name: "--no-fsync", takesValue: false, commands: [.plan, .apply]),
        OptionSpec(name: "--lock-timeout", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--strip-components", takesValue: true, commands: [.unzip]),
        OptionSpec(name: "--max-unpacked-size", takesValue: true, commands: [.unzip]),
        OptionSpec(name: "--deterministic", takesValue: false, commands: [.zip]),
        OptionSpec(name: "--older-than", takesValue: true, commands: [.cache]),
        OptionSpec(name: "--dry-run", takesValue: false, commands: [.cache]),
        OptionSpec(name: "--quiet", takesValue: false, commands: [.validate, .plan, .apply, .zip, .unzip, .cache]),
        OptionSpec(name: "--progress", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--progress-interval", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--report", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--junit", takesValue: true, commands: [.apply]),
        OptionSpec(name: "--help", takesValue: false, commands: Set(CommandName.allCases)),
    ]

    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var args = arguments[...]
        guard let first = args.first else {
            return Invocation(command: .help)
        }
        if first == "--help" || first == "-h" { return Invocation(command: .help) }
        // `--version` and `-V` spell the command `version`, options included (`syncr -V --json`).
        let word = first == "--version" || first == "-V" ? CommandName.version.rawValue : first
        if word.hasPrefix("-") {
            throw UsageError(message: "expected a command before '\(first)' (validate, plan, apply, version or help)")
        }
        guard let command = CommandName(rawValue: word) else {
            let suggestion = Suggest.closest(to: first, among: CommandName.allCases.map(\.rawValue))
            throw UsageError(message: "Unknown command '\(first)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? ""))
        }
        args.removeFirst()
        var invocation = Invocation(command: command)
        var positionals: [String] = []
        var optionsEnded = false
        while let arg = args.popFirst() {
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" { optionsEnded = true; continue }
            if arg == "-h" { invocation.showHelp = true; continue }
            var name = arg
            var inlineValue: String?
            if let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inlineValue = String(arg[arg.index(after: eq)...])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                let valid = options.filter { $0.commands.contains(command) }.map(\.name)
                let suggestion = Suggest.closest(to: name, among: valid)
                throw UsageError(message: "Unknown option '\(name)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? ""),
                                 command: command.rawValue)
            }
            guard spec.commands.contains(command) else {
                throw UsageError(message: "'\(name)' does not apply to '\(command.rawValue)'.", command: command.rawValue)
            }
            var value: String?
            if spec.takesValue {
                if let inlineValue {
                    value = inlineValue
                } else if let next = args.popFirst() {
                    value = next
                } else {
                    throw UsageError(message: "Missing value for '\(name)'.", command: command.rawValue)
                }
            } else if inlineValue != nil {
                throw UsageError(message: "'\(name)' takes no value.", command: command.rawValue)
            }
            switch name {
            case "--json": invocation.json = true
            case "--detailed-exitcode": invocation.detailedExitcode = true
            case "--quiet": invocation.quiet = true
            case "--force": invocation.force = true
            case "--no-fsync": invocation.noFsync = true
            case "--deterministic": invocation.deterministic = true
            case "--older-than": invocation.olderThan = value
            case "--dry-run": invocation.dryRun = true
            case "--strip-components":
                guard let value, let n = Int(value), (0...64).contains(n) else {
                    throw UsageError(message: "'--strip-components' takes a whole number from 0 to 64, not '\(value ?? "")'.",
                                     command: command.rawValue)
                }
                invocation.stripComponents = n
            case "--max-unpacked-size":
                guard let value, let bytes = ByteSize.parse(value), bytes > 0 else {
                    throw UsageError(message: "'--max-unpacked-size' takes a size like 512MiB or 2GiB, not '\(value ?? "")'.",
                                     command: command.rawValue)
                }
                invocation.maxUnpackedSize = bytes
            case "--help": invocation.showHelp = true
            case "--cache":
                guard let value, !value.isEmpty else {
                    throw UsageError(message: "'--cache' needs a folder.", command: command.rawValue)
                }
                invocation.cacheDirectory = value
            case "--jobs":
                guard let value, let n = Int(value), (1...256).contains(n) else {
                    throw UsageError(message: "'--jobs' takes a whole number from 1 to 256, not '\(value ?? "")'.",
                                     command: command.rawValue)
                }
                invocation.jobs = n
            case "--connections":
                guard let value, let n = Int(value), (1...64).contains(n) else {
                    throw UsageError(message: "'--connections' takes a whole number from 1 to 64, not '\(value ?? "")'.",
                                     command: command.rawValue)
                }
                invocation.connections = n
            case "--lock-timeout":
                guard let value, let ms = value == "0" ? 0 : DurationText.parse(value) else {
                    throw UsageError(message: "'--lock-timeout' takes a duration such as 30s, 5m or 1h30m, not '\(value ?? "")'.",
                                     command: command.rawValue)
                }
                invocation.lockTimeoutMilliseconds = ms
            case "--progress":
                guard let value, let mode = ProgressMode(rawValue: value) else {
                    let names = ProgressMode.allCases.map(\.rawValue)
                    let suggestion = Suggest.closest(to: value ?? "", among: names)
                    throw UsageError(message: "'--progress' takes auto, bar, plain or none, not '\(value ?? "")'."
                        + (suggestion.map { " Did you mean '\($0)'?" } ?? ""), command: command.rawValue)
                }
                invocation.progress = mode
            case "--progress-interval":
                guard let value, let ms = DurationText.parse(value), ms >= 100 else {
                    throw UsageError(message: "'--progress-interval' takes a duration of at least 100ms, such as 10s, "
                        + "500ms or 1m, not '\(value ?? "")'.", command: command.rawValue)
                }
                invocation.progressIntervalMilliseconds = ms
            case "--report", "--junit":
                guard let value, !value.isEmpty else {
                    throw UsageError(message: "'\(name)' needs a file name.", command: command.rawValue)
                }
                if name == "--report" { invocation.reportPath = value } else { invocation.junitPath = value }
            default: break
            }
        }
        if invocation.showHelp { return invocation }
        switch command {
        case .help:
            if positionals.count > 1 { throw UsageError(message: "'help' takes at most one command name.", command: "help") }
            if let topic = positionals.first {
                guard let name = CommandName(rawValue: topic) else {
                    let suggestion = Suggest.closest(to: topic, among: CommandName.allCases.map(\.rawValue))
                    throw UsageError(message: "Unknown command '\(topic)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? ""))
                }
                invocation.helpTopic = name
            }
        case .version:
            if let extra = positionals.first { throw UsageError(message: "Unexpected argument '\(extra)'.", command: "version") }
        case .zip, .unzip:
            let names = command == .zip ? ("SRC_DIR", "OUT.zip") : ("ARCHIVE", "DEST_DIR")
            guard positionals.count == 2 else {
                throw UsageError(message: positionals.count < 2
                    ? "'\(command.rawValue)' needs \(names.0) and \(names.1)."
                    : "Unexpected argument '\(positionals[2])'.", command: command.rawValue)
            }
            invocation.source = positionals[0]
            invocation.target = positionals[1]
        case .validate, .plan, .apply:
            if positionals.count > 1 {
                throw UsageError(message: "Unexpected argument '\(positionals[1])': give one manifest.", command: command.rawValue)
            }
            if let path = positionals.first { invocation.manifest = path }
        case .initialize: try InitCommand.bind(positionals, to: &invocation)
        case .cache: try CacheCommand.bind(positionals, to: &invocation)
        case .completions: try Completions.bind(positionals, to: &invocation)
        }
        return invocation
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
