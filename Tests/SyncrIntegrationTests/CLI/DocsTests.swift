import Foundation
@testable import syncr
@testable import SyncrManifest
import Testing

/// The source tree these tests were built from (for man pages and examples).
enum DocsRepository {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // CLI, SyncrIntegrationTests, Tests, file
        return url.path
    }()

    static func read(_ relative: String) throws -> String {
        try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
    }

    /// A man page as `man` shows it: rendered by mandoc, bold and underline overstrikes removed.
    static func rendered(_ relative: String) async throws -> String {
        let r = try await runProcess(executable: "mandoc", arguments: ["-T", "ascii", root + "/" + relative])
        try #require(r.exitCode == 0, "mandoc could not render \(relative): \(r.stderr)")
        var out: [Character] = []
        for c in r.stdout {
            if c == "\u{8}" { _ = out.popLast() } else { out.append(c) }
        }
        // A hyphenated word broken across lines would hide an option; mandoc does not hyphenate
        // `Fl` and `Ic` names, so joining lines is not needed.
        return String(out)
    }

    /// Whether `text` contains `word` not followed by another name character (so `--cache` is
    /// not found inside `--cache-dir`).
    static func contains(_ text: String, word: String) -> Bool {
        var rest = text[...]
        while let r = rest.range(of: word) {
            let after = rest[r.upperBound...].first
            if after.map({ !($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) ?? true { return true }
            rest = rest[r.upperBound...]
        }
        return false
    }
}

/// The man pages, the help texts and the code say the same thing: every command and option the
/// parser knows, every exit code the help lists, every manifest key the decoder accepts.
/// (One direction only, code to docs, so documenting work from other branches ahead of its
/// merge keeps these passing.)
@Suite(.timeLimit(.minutes(5)))
struct DocsTests {
    static let pages = ["man/syncr.1", "man/syncr-manifest.5"]

    @Test(arguments: pages)
    func manPageLintsClean(page: String) async throws {
        let r = try await runProcess(executable: "mandoc", arguments: ["-T", "lint", "-W", "warning",
                                                                       DocsRepository.root + "/" + page])
        #expect(r.exitCode == 0, "mandoc -T lint -W warning \(page):\n\(r.stdout)\(r.stderr)")
        #expect(r.stdout.isEmpty && r.stderr.isEmpty, "\(r.stdout)\(r.stderr)")
    }

    @Test func everyCommandIsDocumented() async throws {
        let man = try await DocsRepository.rendered("man/syncr.1")
        for command in CommandName.allCases {
            #expect(man.contains("syncr \(command.rawValue)"), "syncr(1) SYNOPSIS lacks 'syncr \(command.rawValue)'")
            #expect(Help.overview.contains("\n  \(command.rawValue) "), "the help overview lacks \(command.rawValue)")
            #expect(Help.text(for: command).hasPrefix("Usage: syncr"), "help for \(command.rawValue)")
        }
    }

    @Test func everyOptionIsDocumented() async throws {
        let man = try await DocsRepository.rendered("man/syncr.1")
        let options = man.components(separatedBy: "\nOPTIONS\n").last?.components(separatedBy: "\nENVIRONMENT\n").first ?? ""
        #expect(!options.isEmpty, "syncr(1) has an OPTIONS section")
        for option in ArgumentParser.options {
            #expect(DocsRepository.contains(options, word: option.name), "syncr(1) OPTIONS lacks \(option.name)")
            for command in option.commands where !(option.name == "--help" && [.version, .help].contains(command)) {
                #expect(DocsRepository.contains(Help.text(for: command), word: option.name),
                        "'syncr help \(command.rawValue)' lacks \(option.name)")
            }
        }
    }

    /// Each option's synopsis in syncr(1) names the commands the parser lets it go with.
    @Test func synopsisMatchesTheParser() async throws {
        let man = try await DocsRepository.rendered("man/syncr.1")
        let synopsis = man.components(separatedBy: "\nSYNOPSIS\n").last?.components(separatedBy: "\nDESCRIPTION\n").first ?? ""
        // One entry per "syncr COMMAND ..." block (continuation lines are indented further).
        var blocks: [String: String] = [:]
        var current: String?
        for line in synopsis.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.first == "syncr", words.count > 1 {
                current = String(words[1])
                blocks[current!, default: ""] += line + " "
            } else if let current {
                blocks[current, default: ""] += line + " "
            }
        }
        for option in ArgumentParser.options where option.name != "--help" {
            for command in option.commands {
                let block = blocks[command.rawValue] ?? ""
                #expect(DocsRepository.contains(block, word: option.name),
                        "syncr(1) SYNOPSIS of \(command.rawValue) lacks \(option.name)")
            }
        }
    }

    /// Each command's usage lines (from `Usage:` to the first blank line) name exactly the
    /// options the parser lets it take, so a reader of the usage alone misses none (`-o` is
    /// `--output`'s spelling there).
    @Test(arguments: CommandName.allCases.filter { $0 != .help })
    func usageLinesNameEveryOption(command: CommandName) {
        let usage = Help.text(for: command).components(separatedBy: "\n\n").first ?? ""
        #expect(usage.hasPrefix("Usage: syncr \(command.rawValue)"))
        var named: Set<String> = []
        for word in usage.split(whereSeparator: { " []|\n".contains($0) }) where word.hasPrefix("-") {
            named.insert(word == "-o" ? "--output" : String(word))
        }
        let accepted = Set(ArgumentParser.options.filter { $0.commands.contains(command) && $0.name != "--help" }.map(\.name))
        #expect(named == accepted, "usage of \(command.rawValue): names \(named.sorted()), accepts \(accepted.sorted())")
    }

    /// `syncr --help` says what `s3://` is and which variables it reads, as syncr(1)'s
    /// ENVIRONMENT does; `cache --help` that prune aborts the uploads it leaves.
    @Test func theHelpExplainsS3() throws {
        let man = try DocsRepository.read("man/syncr.1")
        let environment = man.components(separatedBy: ".Sh ENVIRONMENT").last?.components(separatedBy: ".Sh ").first ?? ""
        let variables = environment.split(separator: "\n").filter { $0.hasPrefix(".It Ev AWS_") }
            .flatMap { $0.split(separator: " ").filter { $0.hasPrefix("AWS_") } }
        #expect(variables.count == 10, "syncr(1) ENVIRONMENT lists the AWS variables: \(variables)")
        #expect(Help.overview.contains("s3://BUCKET/KEY"))
        for variable in variables {
            #expect(Help.overview.contains(variable), "the help overview lacks \(variable)")
        }
        #expect(CacheCommand.help.contains("multipart upload to s3://"))
    }

    @Test func everyExitCodeInTheHelpIsInTheManPage() throws {
        let man = try DocsRepository.read("man/syncr.1")
        let status = man.components(separatedBy: ".Sh EXIT STATUS").last?.components(separatedBy: ".Sh ").first ?? ""
        let help = Help.overview.components(separatedBy: "Exit codes:").last ?? ""
        var codes: [String] = []
        for line in help.split(separator: "\n") {
            guard line.hasPrefix("  "), let first = line.split(separator: " ").first, Int(first) != nil else { continue }
            codes.append(String(first))
        }
        #expect(codes.count >= 5, "the help lists the exit codes: \(codes)")
        for code in codes {
            #expect(status.contains(".It \(code)\n"), "syncr(1) EXIT STATUS lacks \(code)")
        }
    }

    /// Every key the manifest decoder accepts has an entry in syncr-manifest(5) with its type
    /// and default, and an example of it in use.
    @Test func everyManifestKeyIsDocumented() async throws {
        let source = try DocsRepository.read("man/syncr-manifest.5")
        let rendered = try await DocsRepository.rendered("man/syncr-manifest.5")
        let keys = Set(ManifestKeys.topLevel + ManifestKeys.defaults + ManifestKeys.download + ManifestKeys.upload)
        #expect(keys.count > 20)
        for key in keys.sorted() {
            let entry = source.split(separator: "\n").first { $0.hasPrefix(".It Ic \(key) ") || $0 == ".It Ic \(key)" }
            guard let entry else {
                Issue.record("syncr-manifest(5) has no '.It Ic \(key)' entry")
                continue
            }
            #expect(entry.contains("Pq ") && (entry.contains("default") || entry.contains("required")),
                    "syncr-manifest(5): '\(entry)' gives the type and the default")
            #expect(DocsRepository.contains(rendered, word: "\(key):") || rendered.contains("\(key): "),
                    "syncr-manifest(5) shows '\(key):' in an example")
        }
    }

    /// `COMMAND --help` prints that command's help, starting with its `Usage:` line.
    @Test(arguments: CommandName.allCases.map(\.rawValue))
    func helpStartsWithUsage(command: String) async throws {
        let r = try await CLIHarness().run([command, "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix(command == "help" ? "Usage: syncr <command>" : "Usage: syncr \(command)"))
        #expect(r.stderr.isEmpty)
    }
}
