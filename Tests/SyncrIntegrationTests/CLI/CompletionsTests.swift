import Foundation
@testable import syncr
import Testing

/// `syncr completions SHELL` prints scripts the shells accept, that complete what the parser
/// accepts; `make install` puts them (and the binary and man pages) in place.
@Suite(.timeLimit(.minutes(5)))
struct CompletionsTests {
    static let checks: [(shell: String, executable: String, arguments: [String])] = [
        ("bash", "bash", ["-n"]),
        ("zsh", "zsh", ["-n"]),
        ("fish", "fish", ["--no-execute"]),
    ]

    @Test(arguments: ["bash", "zsh", "fish"])
    func scriptIsSyntacticallyValid(shell: String) async throws {
        let harness = try CLIHarness()
        let r = try await harness.run(["completions", shell])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let path = try harness.write("completion.\(shell)", r.stdout)
        let check = try #require(Self.checks.first { $0.shell == shell })
        let result = try await runProcess(executable: check.executable, arguments: check.arguments + [path])
        #expect(result.exitCode == 0, "\(check.executable) \(check.arguments) rejects the script:\n\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    /// Sources the bash script and asks `_syncr` for the words of a command line, as bash does on Tab.
    func bashCompletions(_ words: [String], in folder: String) async throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let program = """
        source \(folder)/completion.bash
        COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
        _syncr
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let r = try await runProcess(executable: "bash", arguments: ["-c", program], cwd: URL(fileURLWithPath: folder))
        #expect(r.exitCode == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesCommandsOptionsAndValues() async throws {
        let harness = try CLIHarness()
        try harness.write("completion.bash", try await harness.run(["completions", "bash"]).stdout)
        try harness.write("site.yml", "version: 1\n")

        let commands = try await bashCompletions(["syncr", ""], in: harness.folder)
        #expect(commands == (CommandName.allCases.map(\.rawValue) + ["--help", "--version"]).sorted())

        for command in CommandName.allCases {
            let offered = try await bashCompletions(["syncr", command.rawValue, "--"], in: harness.folder)
            let expected = ArgumentParser.options.filter { $0.commands.contains(command) }.map(\.name).sorted()
            #expect(offered == expected, "options of \(command.rawValue)")
        }
        #expect(try await bashCompletions(["syncr", "completions", ""], in: harness.folder) == ["bash", "fish", "zsh"])
        #expect(try await bashCompletions(["syncr", "cache", "pr"], in: harness.folder) == ["prune"])
        #expect(try await bashCompletions(["syncr", "plan", "si"], in: harness.folder) == ["site.yml"])
        #expect(try await bashCompletions(["syncr", "help", "va"], in: harness.folder) == ["validate"])
    }

    /// A file name with spaces is one candidate (the script split compgen's output on every
    /// blank: `my file.zip` came back as `my` and `file.zip`), and the word typed so far is
    /// dequoted as bash would (`my\ f`, `"my f`, `'my f`), so completion goes on inside it.
    @Test func bashKeepsFileNamesWithSpacesWhole() async throws {
        let harness = try CLIHarness()
        try harness.write("completion.bash", try await harness.run(["completions", "bash"]).stdout)
        try harness.write("my file.zip", "")
        try harness.write("my other.yml", "version: 1\n")
        try FileManager.default.createDirectory(atPath: harness.folder + "/a dir", withIntermediateDirectories: true)
        try harness.write("a dir/inner file.txt", "")

        #expect(try await bashCompletions(["syncr", "plan", "my"], in: harness.folder) == ["my other.yml"])
        #expect(try await bashCompletions(["syncr", "unzip", "my"], in: harness.folder) == ["my file.zip", "my other.yml"])
        for typed in ["my\\ f", "\"my f", "'\\''my f"] {
            #expect(try await bashCompletions(["syncr", "unzip", typed], in: harness.folder) == ["my file.zip"], "\(typed)")
        }
        #expect(try await bashCompletions(["syncr", "apply", "--report", "my\\ f"], in: harness.folder) == ["my file.zip"])
        #expect(try await bashCompletions(["syncr", "zip", "a\\ d"], in: harness.folder) == ["a dir", "a dir"],
                "a folder, offered as the folder and as the file of zip's two positionals")
        #expect(try await bashCompletions(["syncr", "unzip", "a\\ dir/"], in: harness.folder) == ["a dir/inner file.txt"])
    }

    /// Types a command line, a Tab and Return into an interactive bash (on a pseudo-terminal,
    /// through zsh's zpty module) that sourced the generated script, with `syncr` a function
    /// that prints the words it was given: the words are what the completion made of the line,
    /// as readline inserted and quoted it.
    static let bashDriver = """
    zmodload zsh/zpty
    zpty z 'bash --norc --noprofile -i'
    zpty -w z "PS1=''; bind 'set bell-style none'; source $1; syncr() { printf '%s' WORDS; printf '<%s>' \\"\\$@\\"; echo; }; echo SYNCR''READY"
    typeset out=""
    integer i
    for (( i = 0; i < 1200; i++ )); do
      while zpty -r -t z line; do out+=$line; done
      [[ $out == *SYNCRREADY* ]] && break
      sleep 0.1
    done
    out=""
    zpty -w -n z "$2"$'\\t\\n'
    for (( i = 0; i < 1200; i++ )); do
      while zpty -r -t z line; do out+=$line; done
      [[ $out == *WORDS*$'\\n'* ]] && break
      sleep 0.1
    done
    print -r -- "${${out#*WORDS}%%$'\\r'*}"
    zpty -d z
    """

    @Test(arguments: [("syncr unzip my\\ f", "<unzip><my file.zip>"), ("syncr plan my", "<plan><my other.yml>"),
                      ("syncr unzip a\\ dir/in", "<unzip><a dir/inner file.txt>"),
                      ("syncr unzip \"a dir/in", "<unzip><a dir/inner file.txt>"), ("syncr zip a\\ d", "<zip><a dir/>")])
    func bashCompletesNamesWithSpaces(typed: String, words: String) async throws {
        let harness = try CLIHarness()
        try harness.write("completion.bash", try await harness.run(["completions", "bash"]).stdout)
        try harness.write("my file.zip", "")
        try harness.write("my other.yml", "version: 1\n")
        try FileManager.default.createDirectory(atPath: harness.folder + "/a dir", withIntermediateDirectories: true)
        try harness.write("a dir/inner file.txt", "")
        let driver = try harness.write("drive.zsh", Self.bashDriver)
        let r = try await runProcess(executable: "zsh", arguments: ["-f", driver, harness.folder + "/completion.bash", typed],
                                     cwd: URL(fileURLWithPath: harness.folder), timeout: .seconds(300))
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout == words + "\n", "\(typed)<Tab>")
    }

    @Test func fishCompletesCommandsAndOptions() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.fish", try await harness.run(["completions", "fish"]).stdout)
        let program = "source \(harness.folder)/syncr.fish; complete -C 'syncr ' ; echo ---; complete -C 'syncr apply --'"
        let r = try await runProcess(executable: "fish", arguments: ["--no-config", "-c", program])
        #expect(r.exitCode == 0, "\(r.stderr)")
        let parts = r.stdout.components(separatedBy: "---\n")
        try #require(parts.count == 2)
        let commands = Set(parts[0].split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
        for command in CommandName.allCases {
            #expect(commands.contains(command.rawValue), "fish offers \(command.rawValue)")
        }
        let options = Set(parts[1].split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
        for option in ArgumentParser.options where option.commands.contains(.apply) {
            #expect(options.contains(option.name), "fish offers \(option.name) for apply")
        }
        // Each command is described by its line of the help overview.
        #expect(parts[0].contains("apply\tCarry out the plan."))
    }

    /// Types a command line and a Tab into an interactive zsh (on a pseudo-terminal, through
    /// zsh's own zpty module) whose `fpath` holds the generated `_syncr`, and reads back the line.
    static let zshDriver = """
    zmodload zsh/zpty
    zpty z 'zsh -f -i'
    zpty -w z "PS1='' RPROMPT=''; fpath=($1 \\$fpath); autoload -U compinit; compinit -u -D; print -r -- SYNCR''READY"
    typeset out=""
    integer i
    for (( i = 0; i < 1200; i++ )); do
      while zpty -r -t z line; do out+=$line; done
      [[ $out == *SYNCRREADY* ]] && break
      sleep 0.1
    done
    out=""
    zpty -w -n z "$2"$'\\t'
    for (( i = 0; i < 1200; i++ )); do
      while zpty -r -t z line; do out+=$line; done
      [[ $out == *"$3"* ]] && { print FOUND; zpty -d z; exit 0; }
      sleep 0.1
    done
    print -r -- "NOT FOUND in: $out"
    zpty -d z
    exit 1
    """

    /// The typed text never contains the expected word, so finding it means zsh completed it.
    @Test(arguments: [("syncr cac", "cache"), ("syncr apply --con", "--connections"), ("syncr cache pr", "prune"),
                      ("syncr completions z", "zsh"), ("syncr help vali", "validate")])
    func zshCompletes(typed: String, expected: String) async throws {
        let harness = try CLIHarness()
        try harness.write("_syncr", try await harness.run(["completions", "zsh"]).stdout)
        let driver = try harness.write("drive.zsh", Self.zshDriver)
        let r = try await runProcess(executable: "zsh", arguments: ["-f", driver, harness.folder, typed, expected],
                                     timeout: .seconds(300))
        #expect(r.exitCode == 0 && r.stdout.contains("FOUND"), "\(typed)<Tab>: \(r.stdout)\(r.stderr)")
    }

    @Test(arguments: [(["completions"], "needs a shell"), (["completions", "tcsh"], "Unknown shell 'tcsh'"),
                      (["completions", "bash", "zsh"], "Unexpected argument 'zsh'")])
    func usageErrors(arguments: [String], message: String) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    /// `make install-files` (what `make install` runs after the release build) with DESTDIR and
    /// PREFIX, then `make uninstall` with the same: the built binary here stands in for the
    /// release one, so the test does not start a second build.
    @Test func makeInstallAndUninstall() async throws {
        let binary = try #require(CLIHarness.binary)
        let stage = try TemporaryDirectory(prefix: "install")
        defer { stage.remove() }
        let variables = ["DESTDIR=\(stage.path)", "PREFIX=/usr", "BIN=\(binary)"]
        let install = try await runProcess(executable: "make", arguments: ["-C", DocsRepository.root, "install-files"] + variables)
        #expect(install.exitCode == 0, "\(install.stderr)")
        let expected = ["usr/bin/syncr", "usr/share/man/man1/syncr.1", "usr/share/man/man5/syncr-manifest.5",
                        "usr/share/bash-completion/completions/syncr", "usr/share/zsh/site-functions/_syncr",
                        "usr/share/fish/vendor_completions.d/syncr.fish"]
        for file in expected {
            #expect(FileManager.default.fileExists(atPath: stage.path + "/" + file), "installed \(file)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: stage.path + "/usr/bin/syncr"))
        let installedScript = try String(contentsOfFile: stage.path + "/usr/share/bash-completion/completions/syncr", encoding: .utf8)
        #expect(installedScript == Completions.script(for: .bash) + "\n")
        let version = try await runProcess(executable: stage.path + "/usr/bin/syncr", arguments: ["version"])
        #expect(version.stdout.hasPrefix("syncr "))

        let uninstall = try await runProcess(executable: "make", arguments: ["-C", DocsRepository.root, "uninstall"] + variables)
        #expect(uninstall.exitCode == 0, "\(uninstall.stderr)")
        let left = FileManager.default.enumerator(atPath: stage.path)?.compactMap { $0 as? String }.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: stage.path + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
        } ?? []
        #expect(left.isEmpty, "uninstall removes every file install put there: \(left)")
    }
}
