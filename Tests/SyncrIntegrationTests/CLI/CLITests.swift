import Foundation
@testable import syncr
import Testing

/// Runs the built `syncr` binary and checks stdout, stderr and the exit code, as a user or a
/// script would see them. No test here needs a server: unreachable entries use a closed port.
@Suite(.timeLimit(.minutes(5)))
struct CLITests {
    static let commands = ["validate", "plan", "apply", "version", "help"]

    // MARK: help and version

    /// No command is a usage error, not a request for help: a script that lost its command word
    /// must not pass. The overview goes to stderr, after one line that says what is wrong.
    @Test func noArgumentsIsAUsageErrorWithTheOverview() async throws {
        let harness = try CLIHarness()
        let r = try await harness.run([])
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("syncr: error: Missing command.\nUsage: syncr <command>"), "\(r.stderr)")
        for command in Self.commands {
            #expect(r.stderr.contains("\n  \(command)"), "the overview lists \(command)")
        }
        let help = try await harness.run(["help"])
        #expect(r.stderr == "syncr: error: Missing command.\n" + help.stdout, "the same overview as help")
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], ["help", "help"], ["help", "--help"]])
    func overviewHelp(arguments: [String]) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("Usage: syncr <command>"))
        #expect(r.stderr.isEmpty)
    }

    @Test(arguments: ["validate", "plan", "apply", "version"])
    func commandHelp(command: String) async throws {
        let harness = try CLIHarness()
        let spellings = [["help", command], [command, "--help"], [command, "-h"]]
        var outputs: [String] = []
        for arguments in spellings {
            let r = try await harness.run(arguments)
            #expect(r.status == 0, "\(arguments)")
            #expect(r.stdout.hasPrefix("Usage: syncr \(command)"), "\(arguments)")
            #expect(r.stderr.isEmpty, "\(arguments)")
            outputs.append(r.stdout)
        }
        #expect(Set(outputs).count == 1, "every way of asking gives the same help")
    }

    /// `syncr help COMMAND SUBCOMMAND` prints what `syncr COMMAND SUBCOMMAND --help` does, for
    /// every command that has subcommands (`help report merge` was refused: "at most one
    /// command name").
    @Test func subcommandHelp() async throws {
        let harness = try CLIHarness()
        let withSubcommands = CommandName.allCases.filter { !$0.subcommands.isEmpty }
        #expect(Set(withSubcommands.map(\.rawValue)) == ["cache", "report"])
        for command in withSubcommands {
            for subcommand in command.subcommands {
                let help = try await harness.run(["help", command.rawValue, subcommand])
                let flag = try await harness.run([command.rawValue, subcommand, "--help"])
                #expect(help.status == 0, "help \(command.rawValue) \(subcommand): \(help.stderr)")
                #expect(help.stderr.isEmpty)
                #expect(help.stdout.hasPrefix("Usage: syncr \(command.rawValue)"))
                #expect(help.stdout.contains("syncr \(command.rawValue) \(subcommand)"), "its usage shows the subcommand")
                #expect(help.stdout == flag.stdout, "help \(command.rawValue) \(subcommand) is \(command.rawValue) \(subcommand) --help")
            }
        }
    }

    /// A word after the command that is not one of its subcommands says what the command has.
    @Test(arguments: [
        (["help", "cache", "purne"], "syncr: error: Unknown subcommand 'purne' of 'cache': it has 'prune'. Did you mean 'prune'?"),
        (["help", "plan", "now"], "syncr: error: 'plan' has no subcommands: 'syncr help plan' shows its help."),
        (["help", "report", "merge", "extra"],
         "syncr: error: Unexpected argument 'extra': 'help' takes a command and its subcommand."),
    ])
    func subcommandHelpRefusals(arguments: [String], message: String) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr == message + "\nRun 'syncr help help' for usage.\n")
        #expect(r.stdout.isEmpty)
    }

    /// `--help` wins over everything else on the line, even a manifest that does not exist.
    @Test func helpNeedsNoManifest() async throws {
        let r = try await CLIHarness().run(["plan", "--json", "no-such.yml", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("Usage: syncr plan"))
    }

    /// `syncr 0.1.0`, then `commit`, `libcurl`, `libyaml`, `zlib` and `OpenSSL`, one line each,
    /// name and value. (This test build was not given a commit; scripts/test-dist checks that a
    /// release binary names the one it was built from.)
    @Test(arguments: [["--version"], ["version"], ["-V"]])
    func version(arguments: [String]) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.last == "", "ends with a newline")
        #expect(lines.first?.wholeMatch(of: /syncr [0-9]+\.[0-9]+\.[0-9]+.*/) != nil, "\(r.stdout)")
        let names = lines.dropFirst().dropLast().map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(names == ["commit", "libcurl", "libyaml", "zlib", "OpenSSL"], "\(r.stdout)")
        #expect(lines.contains("commit   unknown"), "a plain swift build knows no commit: \(r.stdout)")
    }

    @Test func versionSpellingsAgree() async throws {
        let harness = try CLIHarness()
        let a = try await harness.run(["--version"])
        let b = try await harness.run(["version"])
        let c = try await harness.run(["-V", "--json"])
        let d = try await harness.run(["version", "--json"])
        #expect(a.stdout == b.stdout)
        #expect(c.stdout == d.stdout)
    }

    /// The library versions are the ones loaded at run time; on a Debian machine the -dev
    /// packages pkg-config describes come from the same source package, so they agree.
    @Test func versionJSONNamesTheLibrariesSyncrRunsWith() async throws {
        let r = try await CLIHarness().run(["version", "--json"])
        #expect(r.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let text = try await CLIHarness().run(["version"])
        #expect(text.stdout.hasPrefix("syncr \(try #require(object["version"] as? String))\n"))
        #expect(object["commit"] is NSNull, "a plain swift build knows no commit")
        let libraries = try #require(object["libraries"] as? [String: String])
        let modules = ["libcurl": "libcurl", "libyaml": "yaml-0.1", "zlib": "zlib", "openssl": "libcrypto"]
        #expect(Set(libraries.keys) == Set(modules.keys))
        for (name, module) in modules {
            let expected = try await runProcess(executable: "pkg-config", arguments: ["--modversion", module])
            try #require(expected.exitCode == 0, "pkg-config --modversion \(module): \(expected.stderr)")
            let want = expected.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(libraries[name] == want, "\(name): syncr says \(libraries[name] ?? "nothing"), pkg-config \(want)")
        }
    }

    // MARK: bad command lines exit 64

    /// Names shorter than the heading "ENTRY" still line up under it.
    @Test func planColumnsLineUpUnderShortNames() async throws {
        let harness = try CLIHarness()
        let port = try freePort()
        try harness.write("syncr.yml", "version: 1\ndefaults: { retries: 0 }\ndownloads:\n  - { url: http://127.0.0.1:\(port)/a, to: z }\n")
        let r = try await harness.run(["plan"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count >= 2, "\(r.stdout)")
        let heading = try #require(lines[0].range(of: "SIZE")).lowerBound
        let size = try #require(lines[1].range(of: "?")).lowerBound
        #expect(lines[0].distance(from: lines[0].startIndex, to: heading) == lines[1].distance(from: lines[1].startIndex, to: size),
                "\(r.stdout)")
    }

    @Test func unknownCommandSuggestsTheClosest() async throws {
        let r = try await CLIHarness().run(["aply"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unknown command 'aply'. Did you mean 'apply'?"))
        #expect(r.stdout.isEmpty)
    }

    /// A report written over the manifest would leave the next run nothing to read.
    @Test(arguments: ["--report", "--junit"])
    func aReportOverTheManifestIsRefused(flag: String) async throws {
        let harness = try CLIHarness()
        let manifest = "version: 1\ndownloads: []\n"
        try harness.write("syncr.yml", manifest)
        let r = try await harness.run(["apply", flag, "./syncr.yml"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("'\(flag)' names the manifest itself"), "\(r.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/syncr.yml", encoding: .utf8) == manifest)
    }

    /// Nor over the lockfile, a download, or the other report: each was replaced (a download
    /// then fetched again, a lockfile unreadable, one report lost) with exit 0. Nothing is
    /// removed before the refusal.
    @Test(arguments: [
        (["--report", "syncr.lock"], "'--report' names the manifest's lockfile"),
        (["--report", "out", "--junit", "./out"], "'--report' and '--junit' name one file"),
        (["--junit", "b.txt"], "--junit b.txt: downloads[0] (b.txt) writes there"),
        (["--report", "pkg/r.json"], "--report pkg/r.json: downloads[1] (pkg) writes there"),
    ])
    func aReportOverTheLockfileADownloadOrTheOtherReportIsRefused(flags: [String], message: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - { url: "http://127.0.0.1:9/b.txt", to: b.txt }
              - { url: "http://127.0.0.1:9/p.zip", to: pkg, unzip: true }
            """)
        try harness.write("b.txt", "kept")
        let r = try await harness.run(["apply"] + flags)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/b.txt", encoding: .utf8) == "kept")
        // Also where another check of the command line fails too (a --cache that clashes).
        let both = try await harness.run(["apply", "--cache", "pkg/.c"] + flags)
        #expect(both.status == 64, "\(both.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/b.txt", encoding: .utf8) == "kept")
    }

    /// Nor over an upload's source (it was removed at the start, the upload failed as if it
    /// had never been built, and the next run sent the report in its place), a file in an
    /// upload folder (sent with it next time), the cache (its records journal, data files and
    /// lock replaced: every file fetched again), or a folder (found only after the whole run).
    /// Nothing is removed or sent before the refusal.
    @Test(arguments: [
        (["--report", "build/app.tar"], "--report build/app.tar: uploads[0] (build/app.tar) reads it; give the report a file of its own"),
        (["--junit", "site/r.xml"], "--junit site/r.xml: uploads[1] (site/) reads it"),
        (["--report", ".syncr/cache/records.journal"], "--report .syncr/cache/records.journal: it is in syncr's cache folder"),
        (["--report", "c/syncr.lock", "--cache", "c"], "--report c/syncr.lock: it is in syncr's cache folder"),
        (["--report", "site"], "--report site: uploads[1] (site/) reads it"),
        (["--junit", "build"], "--junit build: it is a folder; name a file in it"),
    ])
    func aReportOverAnUploadTheCacheOrNowhereIsRefused(flags: [String], message: String) async throws {
        let harness = try CLIHarness()
        // Nothing may be sent: the server is not there, and the refusal comes first.
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            uploads:
              - { from: build/app.tar, to: "http://127.0.0.1:9/app.tar", method: put }
              - { from: site/, to: "http://127.0.0.1:9/site/", method: put }
            """)
        for folder in ["build", "site"] {
            try FileManager.default.createDirectory(atPath: harness.folder + "/" + folder, withIntermediateDirectories: true)
        }
        try harness.write("build/app.tar", "the artifact")
        try harness.write("site/index.html", "<p>")
        let r = try await harness.run(["apply"] + flags)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("syncr: error: " + message), "\(r.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/build/app.tar", encoding: .utf8) == "the artifact")
        #expect(!r.stderr.contains("[1/"), "no entry started: \(r.stderr)")
    }

    /// A report path below a file, or below a link to nothing, is refused before anything moves
    /// (it ran the whole apply, then failed to remove and to write the report, exit 1), named
    /// by what is in the way, also below an upload's file (it said the upload reads it).
    @Test(arguments: [
        (["--report", "plain.txt/r.json"], "--report plain.txt/r.json: its folder cannot be made (plain.txt: a file is in the way)"),
        (["--junit", "plain.txt/deep/j.xml"], "--junit plain.txt/deep/j.xml: its folder cannot be made (plain.txt: a file is in the way)"),
        (["--report", "gone/r.json"], "--report gone/r.json: its folder cannot be made (gone: a symbolic link to nothing is in the way)"),
        (["--report", "small.txt/r.json"], "--report small.txt/r.json: its folder cannot be made (small.txt: a file is in the way)"),
    ])
    func aReportBelowAFileIsRefusedBeforeTheRun(flags: [String], message: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "http://127.0.0.1:9/a.bin", to: out/a.bin }
            uploads:
              - { from: small.txt, to: "http://127.0.0.1:9/small.txt", method: put }
            """)
        try harness.write("plain.txt", "mine\n")
        try harness.write("small.txt", "sent\n")
        try FileManager.default.createSymbolicLink(atPath: harness.folder + "/gone", withDestinationPath: "nowhere")
        let r = try await harness.run(["apply"] + flags)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr == "syncr: error: \(message); give the report a path in a folder\n", "\(r.stderr)")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/out"), "nothing was fetched")
        #expect(try String(contentsOfFile: harness.folder + "/plain.txt", encoding: .utf8) == "mine\n")
        #expect(try String(contentsOfFile: harness.folder + "/small.txt", encoding: .utf8) == "sent\n")
    }

    /// A report's folder that is not there yet is made (a run's downloads may make it first, or
    /// nothing does); one that cannot be written is refused before the run: /proc takes no new
    /// file, even from root, whom access() lets write anywhere (the run went to its end, then
    /// failed to write the report, exit 1).
    @Test func aReportsMissingFolderIsMadeAndAnUnwritableOneIsRefused() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "http://127.0.0.1:9/a.bin", to: out/a.bin }
            """)
        let made = try await harness.run(["apply", "--junit", "reports/deep/j.xml", "--report", "reports/r.json"])
        #expect(made.status == 1, "the download fails: \(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: harness.folder + "/reports/deep/j.xml"))
        #expect(FileManager.default.fileExists(atPath: harness.folder + "/reports/r.json"))
        let proc = try await harness.run(["apply", "--junit", "/proc/syncr-report-test.xml"])
        #expect(proc.status == 64, "\(proc.stderr)")
        #expect(proc.stderr.hasPrefix("syncr: error: --junit /proc/syncr-report-test.xml: its folder /proc cannot be written ("),
                "\(proc.stderr)")
        #expect(!proc.stderr.contains("[1/"), "no entry started: \(proc.stderr)")
        let below = try await harness.run(["apply", "--report", "/proc/syncr-report-test/r.json"])
        #expect(below.status == 64, "\(below.stderr)")
        #expect(below.stderr.hasPrefix("syncr: error: --report /proc/syncr-report-test/r.json: its folder cannot be made in /proc ("),
                "\(below.stderr)")
        if geteuid() == 0 {
            #expect(proc.stderr.hasSuffix("(it is on proc, which holds no files); give the report a path on a disk\n"), "\(proc.stderr)")
        }
    }

    /// A cache folder given on the command line is held to the rule the manifest's cache: is:
    /// no destination inside it, no unpacked folder over it.
    @Test(arguments: [("out", "downloads[0] (out/a.bin) writes into it"), ("pkg/.cache", "downloads[1] (pkg) is unpacked over it or into it")])
    func aCacheGivenOnTheCommandLineMayNotHoldADestination(cache: String, message: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - { url: "http://127.0.0.1:9/a.bin", to: out/a.bin }
              - { url: "http://127.0.0.1:9/p.zip", to: pkg, unzip: true }
            """)
        for command in ["plan", "apply"] {
            let r = try await harness.run([command, "--cache", cache])
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr.contains("syncr: error: --cache \(cache): \(message); give the cache a folder of its own"), "\(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/" + cache), "nothing was made")
    }

    /// A `--cache` where no folder can be is one usage error, naming the path, from every
    /// command that takes it: `cache` printed a note that there was no cache there and then an
    /// error, `apply` and `lock --hash` exited 1, `plan` and `lock` took it for an empty cache.
    @Test(arguments: [["cache"], ["cache", "prune", "--older-than", "1d"], ["plan"], ["apply"], ["lock"], ["lock", "--hash"]])
    func aCacheGivenOnTheCommandLineMustBeAFolder(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - { url: "http://127.0.0.1:9/a.bin", to: out/a.bin }
            """)
        try harness.write("notes.txt", "mine\n")
        let cases = [
            ("notes.txt", "it is a file, not a folder"),
            ("notes.txt/", "it is a file, not a folder"),
            ("notes.txt/sub/cache", "notes.txt, above it, is a file, not a folder"),
        ]
        for (cache, problem) in cases {
            let r = try await harness.run(command + ["--cache", cache])
            #expect(r.status == 64, "\(command) \(cache): \(r.stderr)")
            #expect(r.stderr == "syncr: error: --cache \(cache): \(problem); name a folder for the cache "
                + "(one that is not there yet is made)\n", "\(command) \(cache)")
            #expect(r.stdout.isEmpty, "\(command) \(cache): \(r.stdout)")
        }
        #expect(try String(contentsOfFile: harness.folder + "/notes.txt", encoding: .utf8) == "mine\n")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/out"), "nothing was fetched")
    }

    /// The manifest's `cache:` where no folder can be is an invalid manifest value (exit 65),
    /// named at its line, from every command that uses it, before anything is asked or
    /// fetched: apply exited 1 after the plan ("cannot create the cache folder"), and plan took
    /// it for an empty cache. The default `.syncr/cache` below a file is named too, without a
    /// line; with `--cache` the manifest's is not used, and not looked at.
    @Test(arguments: [["validate"], ["cache"], ["cache", "prune", "--older-than", "1d"], ["plan"], ["apply"], ["lock"], ["lock", "--hash"]])
    func aManifestsCacheMustBeAFolder(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("notes.txt", "mine\n")
        let cases = [
            ("notes.txt", "it is a file, not a folder"),
            ("notes.txt/sub/cache", "/notes.txt, above it, is a file, not a folder"),
        ]
        for (cache, problem) in cases {
            try harness.write("syncr.yml", """
                version: 1
                cache: \(cache)
                downloads:
                  - { url: "http://127.0.0.1:9/a.bin", to: out/a.bin }
                """)
            let r = try await harness.run(command)
            #expect(r.status == 65, "\(command) \(cache): \(r.stderr)")
            #expect(r.stderr.hasPrefix("syncr.yml:2:8: error: cache: \"\(cache)\": "), "\(command) \(cache): \(r.stderr)")
            #expect(r.stderr.hasSuffix("\(problem); name a folder for the cache (one that is not there yet is made)\n"
                + "cache: \(cache)\n       ^\n"), "\(command) \(cache): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(command) \(cache): \(r.stdout)")
            if command != ["validate"] {
                let other = try await harness.run(command + ["--cache", "elsewhere"])
                #expect(other.status != 65 && !other.stderr.contains("syncr.yml:2:8"), "\(command) \(cache): \(other.stderr)")
            }
        }
        try harness.write("syncr.yml", "version: 1\ndownloads:\n  - { url: \"http://127.0.0.1:9/a.bin\", to: out/a.bin }\n")
        try harness.write(".syncr", "not a folder\n")
        let byDefault = try await harness.run(command)
        #expect(byDefault.status == 65, "\(command): \(byDefault.stderr)")
        #expect(byDefault.stderr.hasPrefix("syncr.yml: error: cache: \".syncr/cache\" (the default): "), "\(command): \(byDefault.stderr)")
        #expect(byDefault.stderr.hasSuffix("/.syncr, above it, is a file, not a folder; name a folder for the cache "
            + "(one that is not there yet is made)\n"), "\(command): \(byDefault.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/notes.txt", encoding: .utf8) == "mine\n")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/out"), "nothing was fetched")
    }

    /// A symbolic link in the way is named as one: mkdir does not follow a link to nothing.
    @Test(arguments: [("nowhere", "it is a symbolic link to nothing"), ("notes.txt", "it is a symbolic link to a file, not a folder")])
    func aLinkGivenAsTheCacheMustLeadToAFolder(target: String, problem: String) async throws {
        let harness = try CLIHarness()
        try harness.write("notes.txt", "mine\n")
        try FileManager.default.createSymbolicLink(atPath: harness.folder + "/link", withDestinationPath: target)
        let r = try await harness.run(["cache", "--cache", "link"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr == "syncr: error: --cache link: \(problem); name a folder for the cache "
            + "(one that is not there yet is made)\n")
    }

    @Test func unknownCommandWithNothingClose() async throws {
        let r = try await CLIHarness().run(["zzzzzzzz"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unknown command 'zzzzzzzz'."))
        #expect(!r.stderr.contains("Did you mean"))
    }

    @Test(arguments: ["plan", "apply"])
    func unknownOptionSuggestsTheClosest(command: String) async throws {
        let r = try await CLIHarness().run([command, "--jsn"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unknown option '--jsn'. Did you mean '--json'?"))
        #expect(r.stderr.contains("syncr help \(command)"), "points at the command's usage")
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [
        ["plan", "--jobs", "0"],
        ["plan", "--jobs", "x"],
        ["apply", "--jobs=0"],
        ["apply", "--jobs", "257"],
        ["plan", "--jobs", "-1"],
        ["plan", "--jobs"],
    ])
    func badJobs(arguments: [String]) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains("'--jobs'"))
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [
        ["validate", "--json"],
        ["validate", "a.yml", "b.yml"],
        ["version", "extra"],
        ["--json"],
        ["plan", "--json=yes"],
        ["help", "aply"],
    ])
    func otherUsageErrors(arguments: [String]) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("syncr: error: "))
        #expect(r.stdout.isEmpty)
    }

    // MARK: validate

    @Test func validManifest() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            downloads:
              - url: https://example.com/a.bin
                to: data/a.bin
            """)
        let r = try await harness.run(["validate", "syncr.yml"])
        #expect(r.status == 0)
        #expect(r.stdout == "syncr.yml: valid (1 download, 0 uploads)\n")
        #expect(r.stderr.isEmpty)
        // The manifest defaults to syncr.yml in the current folder.
        let implicit = try await harness.run(["validate"])
        #expect(implicit.status == 0)
        #expect(implicit.stdout == r.stdout)
        let quiet = try await harness.run(["validate", "--quiet"])
        #expect(quiet.status == 0)
        #expect(quiet.stdout.isEmpty)
    }

    @Test func invalidManifestShowsPositionAndCaret() async throws {
        let harness = try CLIHarness()
        try harness.write("bad.yml", """
            version: 1
            downloads:
              - url: ftp://example.com/x
                to: x
            """)
        let r = try await harness.run(["validate", "bad.yml"])
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == """
            bad.yml:3:10: error: downloads[0].url: expected an http(s) URL, found "ftp://example.com/x": its scheme is not http, https or s3 (the only ones syncr speaks)
              - url: ftp://example.com/x
                     ^

            """)
    }

    @Test(arguments: ["validate", "plan", "apply"])
    func invalidManifestStopsEveryCommand(command: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndowloads: []\n")
        let r = try await harness.run([command])
        #expect(r.status == 65)
        #expect(r.stderr.contains("syncr.yml:2:1: error: "))
        #expect(r.stderr.contains("\n^\n"), "a caret under the column")
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: ["validate", "plan", "apply"])
    func missingManifest(command: String) async throws {
        let r = try await CLIHarness().run([command, "no-such-manifest.yml"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("no-such-manifest.yml: error: cannot read the manifest: No such file or directory"))
        #expect(r.stdout.isEmpty)
    }

    /// The hint for a missing manifest must point at something the user can actually run.
    @Test func missingManifestHintNamesARealCommand() async throws {
        let harness = try CLIHarness()
        let r = try await harness.run(["validate", "no-such-manifest.yml"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("hint:"))
        if r.stderr.contains("syncr init") {
            let initRun = try await harness.run(["init", "--help"])
            #expect(initRun.status != 64, "the hint names 'syncr init', so that command must exist")
        }
    }

    @Test func manifestThatIsAFolder() async throws {
        let harness = try CLIHarness()
        try FileManager.default.createDirectory(atPath: harness.folder + "/dir.yml", withIntermediateDirectories: false)
        let r = try await harness.run(["validate", "dir.yml"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("dir.yml: error: cannot read the manifest"))
    }

    // MARK: plan and apply without a server

    @Test(arguments: ["version: 1\ndownloads: []\n", "version: 1\ndownloads:\n"])
    func emptyManifest(yaml: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", yaml)

        let apply = try await harness.run(["apply"])
        #expect(apply.status == 0)
        #expect(apply.stdout.isEmpty, "apply prints to stdout only with --json")
        #expect(apply.stderr.contains("0 failed"))

        let plan = try await harness.run(["plan", "--detailed-exitcode"])
        #expect(plan.status == 0, "nothing to do")
        #expect(plan.stdout.contains("Nothing to do."))

        let json = try await harness.run(["apply", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["items"] as? [Any])?.isEmpty == true)
    }

    @Test func planJSONForAnUnreachableServer() async throws {
        let harness = try CLIHarness()
        let port = try CLIHarness.closedPort()
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: http://127.0.0.1:\(port)/file.bin
                to: out/file.bin
            """)
        let r = try await harness.run(["plan", "--json"])
        #expect(r.status == 1, "an entry that cannot be planned is a failure")
        #expect(r.stdout.hasSuffix("\n"))
        let line = r.stdout.dropLast()
        #expect(!line.contains("\n"), "exactly one line of JSON")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        let items = try #require(object["items"] as? [[String: Any]])
        try #require(items.count == 1)
        #expect(items[0]["action"] as? String == "error")
        #expect(items[0]["url"] as? String == "http://127.0.0.1:\(port)/file.bin")
        #expect(items[0]["to"] as? String == "out/file.bin")
        #expect((items[0]["reason"] as? String)?.isEmpty == false)
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["error"] as? Int == 1)
        #expect(totals["download_bytes"] as? Int == 0)
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/out/file.bin"), "plan changes nothing")
    }

    @Test func planTextForAnUnreachableServer() async throws {
        let harness = try CLIHarness()
        let port = try CLIHarness.closedPort()
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: http://127.0.0.1:\(port)/file.bin
                to: out/file.bin
            """)
        let r = try await harness.run(["plan", "--detailed-exitcode"])
        #expect(r.status == 1, "a failure outranks 'there is work'")
        #expect(r.stdout.contains("error    out/file.bin"))
        #expect(r.stdout.contains("1 failed to plan"))
        let apply = try await harness.run(["apply"])
        #expect(apply.status == 1)
        #expect(apply.stderr.contains("1 failed"))
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/out/file.bin"))
    }

    // MARK: secrets

    static let headerSecret = "hdr-Zq7Wx3Kp9Lm2"
    static let urlSecret = "url-Vb8Nc4Rt6Yh1"

    /// Values expanded from `${ENV}` never reach the terminal or the JSON, whatever the command.
    @Test(arguments: [["plan"], ["plan", "--json"], ["apply"], ["apply", "--json"], ["validate"]])
    func expandedSecretsNeverPrinted(arguments: [String]) async throws {
        let harness = try CLIHarness()
        let port = try CLIHarness.closedPort()
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: http://127.0.0.1:\(port)/x?t=${SYNCR_TEST_SECRET2}
                to: out/x
                headers: {Authorization: "Bearer ${SYNCR_TEST_SECRET}"}
            """)
        let r = try await harness.run(arguments, environment: [
            "SYNCR_TEST_SECRET": Self.headerSecret,
            "SYNCR_TEST_SECRET2": Self.urlSecret,
        ])
        #expect(r.status == (arguments == ["validate"] ? 0 : 1))
        #expect(!r.allOutput.contains(Self.headerSecret))
        #expect(!r.allOutput.contains(Self.urlSecret))
        if arguments != ["validate"] {
            #expect(r.allOutput.contains("${SYNCR_TEST_SECRET2}"), "the URL is shown as written")
        }
    }

    static func urlPasswordManifest(_ harness: CLIHarness) throws {
        let port = try CLIHarness.closedPort()
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: http://alice:pw-Hx5Jd2Qs@127.0.0.1:\(port)/x
                to: out/x
            """)
    }

    /// A password written into a URL is masked in messages.
    @Test(arguments: [["plan"], ["apply"]])
    func urlPasswordMaskedInText(arguments: [String]) async throws {
        let harness = try CLIHarness()
        try Self.urlPasswordManifest(harness)
        let r = try await harness.run(arguments)
        #expect(r.status == 1)
        #expect(!r.allOutput.contains("pw-Hx5Jd2Qs"))
        #expect(r.allOutput.contains("alice:***@127.0.0.1"))
    }

    /// ... and in JSON, the `url` field included.
    @Test(arguments: [["plan", "--json"], ["apply", "--json"]])
    func urlPasswordMaskedInJSON(arguments: [String]) async throws {
        let harness = try CLIHarness()
        try Self.urlPasswordManifest(harness)
        let r = try await harness.run(arguments)
        #expect(r.status == 1)
        #expect(!r.allOutput.contains("pw-Hx5Jd2Qs"))
        #expect(r.stdout.contains("\"url\":\"http://alice:***@127.0.0.1:"))
    }
}
