#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `syncr apply --progress ...` run as a user runs it: plain lines off a terminal, a bar redrawn
/// in place on a pseudo-terminal (made by util-linux `script`, in Debian's essential set).
@Suite("progress output", .timeLimit(.minutes(5)))
struct ProgressTests {
    /// A server with a throttled file (it takes at least 3 s, so periodic lines and several
    /// frames must appear whatever the machine's speed; at 1.5 s, a ThreadSanitizer build in a
    /// full run drew every frame of the bar before the file's first bytes were counted), a
    /// small file and a missing one.
    static func serve() async throws -> (FaultServer, TemporaryDirectory) {
        let www = try TemporaryDirectory(prefix: "www-progress")
        _ = try makeFile(path: www.appending("slow.bin"), size: 600_000, seed: 7)
        _ = try makeFile(path: www.appending("small.bin"), size: 1000, seed: 8)
        let server = try await FaultServer.start(root: www.url)
        try await server.behave(path: "/slow.bin", FaultBehaviour(rate: 200_000))
        return (server, www)
    }

    static func manifest(_ harness: CLIHarness, _ server: FaultServer) throws {
        try harness.write("syncr.yml", """
            version: 1
            defaults:
              retries: 0
            downloads:
              - url: \(server.url("/slow.bin"))
                to: out/slow.bin
              - url: \(server.url("/small.bin"))
                to: out/small.bin
              - url: \(server.url("/missing.bin"))
                to: out/missing.bin
            """)
    }

    // MARK: plain

    /// Off a terminal, `auto` is plain: start and finish lines, periodic summaries, the final
    /// summary, all whole lines; no carriage return, no escape sequence; nothing on stdout.
    @Test func plainOffATerminal() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        let r = try await harness.run(["apply", "--progress-interval", "200ms"])
        #expect(r.status == 1, "the missing file fails the run")
        #expect(r.stdout.isEmpty, "apply writes to stdout only with --json")
        #expect(!r.stderr.contains("\r"), "plain output never relies on carriage returns")
        #expect(!r.stderr.contains("\u{1B}"), "no terminal control off a terminal")
        #expect(r.stderr.hasSuffix("\n"))
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("[") && $0.contains("download out/slow.bin") && $0.contains("/slow.bin") })
        #expect(lines.contains { $0.contains("download out/small.bin") && $0.hasPrefix("[") })
        let done = try #require(lines.first { $0.hasPrefix("  done download out/slow.bin: ") }, "\(r.stderr)")
        #expect(done.contains("585.9 KiB in "), "size and time")
        #expect(done.hasSuffix("/s"), "average speed")
        #expect(lines.contains { $0.hasPrefix("  FAILED out/missing.bin: ") && $0.contains("404") })
        let periodic = lines.filter { $0.hasPrefix("  progress: ") }
        #expect(!periodic.isEmpty, "a 3 s transfer sees summaries every 200 ms: \(r.stderr)")
        for line in periodic {
            #expect(line.contains("/3 files, "), "files done/total: \(line)")
            #expect(line.contains(" of "), "bytes done/total: \(line)")
            #expect(line.contains("/s"), "speed: \(line)")
        }
        // The summary comes last: counts per action, bytes, time, then each failure.
        let summary = try #require(lines.firstIndex { $0.hasPrefix("syncr: ") })
        #expect(lines[summary].contains("2 downloaded"))
        #expect(lines[summary].contains("1 failed"))
        #expect(lines[summary].contains("received"))
        #expect(lines[(summary + 1)...].contains { $0.hasPrefix("  failed: out/missing.bin: ") })
        #expect(!lines[summary...].contains { $0.hasPrefix("  progress: ") }, "no summary line after the end")
    }

    /// An entry waiting for one of the `jobs` slots has not started: its start line comes when
    /// its transfer does (every entry's came at once, and its time counted the wait).
    @Test func anEntryStartsWhenItGetsASlotNotWhileItWaits() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        // Both slow (2 s and 3 s at the server's pace), since either may get the slot first.
        try await server.behave(path: "/small.bin", FaultBehaviour(rate: 500))
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0, jobs: 1 }
            downloads:
              - { url: "\(server.url("/slow.bin"))", to: out/slow.bin }
              - { url: "\(server.url("/small.bin"))", to: out/small.bin }
            """)
        let r = try await harness.run(["apply", "--progress", "plain", "--progress-interval", "500ms"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        // The summary lines printed while the first runs come before the second's start.
        let first = try #require(lines.firstIndex { $0.hasPrefix("[1/2] download ") }, "\(r.stderr)")
        let second = try #require(lines.firstIndex { $0.hasPrefix("[2/2] download ") }, "\(r.stderr)")
        #expect(lines[first..<second].contains { $0.hasPrefix("  progress: ") }, "\(r.stderr)")
    }

    /// An entry that fails when its server is asked about it, before it can start, takes its
    /// number in the count as well: the count stopped short of the total ("[1/2]" and a
    /// failure), as if an entry were still to come.
    @Test func anEntryThatFailsBeforeItStartsIsCounted() async throws {
        let www = try TemporaryDirectory(prefix: "www-count")
        _ = try makeFile(path: www.appending("a.bin"), size: 1000, seed: 1)
        _ = try makeFile(path: www.appending("b.bin"), size: 1000, seed: 2)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        let harness = try CLIHarness()
        try harness.write("syncr.yml", """
            version: 1
            defaults: { retries: 0 }
            downloads:
              - { url: "\(server.url("/a.bin"))", to: out/a.bin }
              - { url: "\(server.url("/b.bin"))", to: out/b.bin }
            """)
        let first = try await harness.run(["apply", "--progress", "plain"])
        try #require(first.status == 0, "\(first.stderr)")
        // a.bin is up to date unless its server says otherwise: now it fails to say.
        try await server.behave(path: "/a.bin", FaultBehaviour(status: 500))
        try FileManager.default.removeItem(atPath: harness.folder + "/out/b.bin")
        let r = try await harness.run(["apply", "--progress", "plain"])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("[1/2] ") }, "\(r.stderr)")
        let failed = try #require(lines.firstIndex { $0.hasPrefix("  FAILED out/a.bin: ") }, "\(r.stderr)")
        #expect(lines[failed - 1].hasPrefix("[2/2] error out/a.bin from ") || lines[failed - 1].hasPrefix("[1/2] error out/a.bin from "),
                "\(r.stderr)")
        #expect(lines.filter { $0.hasPrefix("[") }.count == 2, "\(r.stderr)")
    }

    /// `--quiet` keeps working off a terminal, where progress would be plain lines: the summary
    /// only, which names each failure once, and no line every interval.
    @Test func quietShowsFailuresAndSummaryOnly() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        let r = try await harness.run(["apply", "--quiet", "--progress-interval", "100ms"])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.hasPrefix("[") || $0.hasPrefix("  done ") || $0.hasPrefix("  progress: ") },
                "\(r.stderr)")
        #expect(lines.filter { $0.contains("out/missing.bin") }.count == 1, "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("  failed: out/missing.bin: ") })
        #expect(lines.contains { $0.hasPrefix("syncr: 2 downloaded, 0 up to date, 1 failed; ") })
    }

    /// `--progress none --json`: stdout is exactly one JSON line; stderr has only the summary.
    @Test func jsonIsAloneOnStdout() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        let r = try await harness.run(["apply", "--json", "--progress", "none"])
        #expect(r.status == 1)
        #expect(r.stdout.hasSuffix("\n"))
        #expect(!r.stdout.dropLast().contains("\n"), "one line of JSON and nothing else")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.map { $0["status"] as? String } == ["ok", "ok", "failed"])
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("syncr: 2 downloaded") == true, "\(r.stderr)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  failed: ") })
    }

    @Test(arguments: [
        (["--progress", "fancy"], "'--progress' takes auto, bar, plain or none, not 'fancy'."),
        (["--progress=bra"], "Did you mean 'bar'?"),
        (["--progress-interval", "10"], "'--progress-interval' takes a duration"),
        (["--progress-interval", "50ms"], "at least 100ms"),
        (["--report="], "'--report' needs a file name."),
        (["--junit"], "Missing value for '--junit'."),
        // The next word is an option, not the value: no file named --json is written.
        (["--report", "--json"], "Missing value for '--report': '--json' is an option (for a value that starts with '-', write --report=--json)."),
        (["-o", "x"], "'-o' does not apply to 'apply'."),
        // Asked for together, the bar was drawn: one of the two was not what the user meant.
        (["--quiet", "--progress", "bar"], "'--quiet' shows no progress and '--progress bar' asks for a bar; give one of them."),
        (["--progress=bar", "--quiet"], "'--quiet' shows no progress and '--progress bar' asks for a bar; give one of them."),
        // --quiet printed no progress line though plain ones were asked for.
        (["--quiet", "--progress", "plain"], "'--quiet' shows no progress and '--progress plain' asks for progress lines; give one of them."),
    ])
    func badProgressOptions(arguments: [String], message: String) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads: []\n")
        let r = try await harness.run(["apply"] + arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func progressOptionsBelongToApply() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads: []\n")
        let r = try await harness.run(["plan", "--progress", "plain"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("'--progress' does not apply to 'plan'."))
        let help = try await harness.run(["apply", "--help"])
        for option in ["--progress MODE", "--progress-interval TIME", "--report FILE", "--junit FILE"] {
            #expect(help.stdout.contains(option))
        }
    }

    // MARK: bar

    /// Runs `syncr apply ARGS` under a pseudo-terminal `columns` wide; returns what the terminal
    /// received (stdout and stderr of syncr both go to it).
    static func runOnTerminal(_ harness: CLIHarness, _ arguments: [String], columns: Int = 60,
                              environment: [String: String] = [:]) async throws -> String {
        let binary = try #require(CLIHarness.binary)
        // The test runner's own NO_COLOR (if any) must not leak into the cases that expect colour.
        let unset = environment["NO_COLOR"] == nil ? "env -u NO_COLOR " : ""
        let command = "stty cols \(columns) rows 20; exec \(unset)\(([binary] + arguments).map(shellQuote).joined(separator: " "))"
        var env = ["NO_PROXY": "*", "http_proxy": "", "HTTP_PROXY": "", "TERM": "xterm"]
        env.merge(environment) { $1 }
        let result = try await runProcess(executable: "script", arguments: ["-qfec", command, "/dev/null"],
                                          environment: env, cwd: URL(fileURLWithPath: harness.folder),
                                          timeout: .seconds(60))
        return result.stdout
    }

    static func shellQuote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// `--quiet` with auto, said or not, is no bar on a terminal (only `--progress bar` with it
    /// is refused): the summary alone, with its failure.
    @Test(arguments: [["--quiet"], ["--quiet", "--progress", "auto"]])
    func quietOnATerminalDrawsNoBar(arguments: [String]) async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        let output = try await Self.runOnTerminal(harness, ["apply"] + arguments)
        #expect(!output.contains("\u{1B}[?25l") && !output.contains("\u{1B}[K"), "no bar: \(output.debugDescription)")
        let lines = Self.visible(output).split(whereSeparator: \.isNewline).map(String.init)
        #expect(!lines.contains { $0.hasPrefix("[") || $0.hasPrefix("  done ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("syncr: 2 downloaded, 0 up to date, 1 failed; ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("  failed: out/missing.bin: ") }, "\(lines)")
    }

    /// On a terminal, `auto` is the bar: the cursor is hidden, the block is redrawn in place
    /// (back to its top, each line overwritten), never wider than the terminal (the frame cap
    /// is checked on a clock of the test's own, in BarFrameCapTests); at the end the block is erased, the cursor shown, and the summary
    /// printed after it. Colour marks "done" and "FAILED".
    @Test func barRedrawsInPlaceOnATerminal() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        let output = try await Self.runOnTerminal(harness, ["apply"])
        let hide = try #require(output.range(of: "\u{1B}[?25l"), "the cursor is hidden: \(output.debugDescription)")
        let show = try #require(output.range(of: "\u{1B}[?25h", options: .backwards), "and shown again")
        #expect(hide.lowerBound < show.lowerBound)
        let frames = output.components(separatedBy: "\u{1B}[K\u{1B}[J").count - 1
        #expect(frames >= 2, "a 3 s transfer is drawn more than once: \(output.debugDescription)")
        // Back to the block's top (its height depends on how many transfers overlap).
        #expect((1...4).contains { output.contains("\r\u{1B}[\($0)A") }, "redrawn from the block's top")
        #expect(output.contains("  total "), "a total line")
        #expect(output.contains("out/slow.bin"), "a line per transfer")
        #expect(output.contains("%"), "with a percentage")
        #expect(output.contains("\u{1B}[32mdone\u{1B}[0m download out/slow.bin"))
        #expect(output.contains("\u{1B}[31mFAILED\u{1B}[0m out/missing.bin"))
        // Every line of the block fits the 60 columns (lines printed above it may wrap).
        for frame in output.components(separatedBy: "\u{1B}[J").dropLast() {
            for piece in frame.components(separatedBy: "\u{1B}[K") {
                let lines = piece.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n")
                let text = Self.visible(lines.last ?? "")
                if text.contains("done ") || text.contains("FAILED ") { continue }
                #expect(text.count < 60, "\(text.debugDescription) is wider than the terminal")
            }
        }
        // After the bar: the summary, and no more drawing.
        let tail = String(output[show.upperBound...])
        #expect(tail.hasPrefix("syncr: 2 downloaded, 0 up to date, 1 failed; "), "\(tail.debugDescription)")
        #expect(!tail.contains("\u{1B}"))
    }

    /// `NO_COLOR` keeps the bar but drops colour; `TERM=dumb` gets plain lines without colour,
    /// even when a bar is asked for (such a terminal cannot move its cursor); `--progress plain`
    /// on a terminal gets plain lines (coloured: it is a terminal).
    @Test(arguments: [["NO_COLOR": "1"], ["TERM": "dumb"], ["TERM": "dumb", "bar": "asked"], [:]])
    func terminalVariants(environment: [String: String]) async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        let harness = try CLIHarness()
        try Self.manifest(harness, server)
        var environment = environment
        let arguments = environment.isEmpty ? ["apply", "--progress", "plain"]
            : environment.removeValue(forKey: "bar") != nil ? ["apply", "--progress", "bar"] : ["apply"]
        let output = try await Self.runOnTerminal(harness, arguments, environment: environment)
        #expect(output.contains("done\(environment.isEmpty ? "\u{1B}[0m" : "") download out/slow.bin"),
                "\(output.debugDescription)")
        if environment["NO_COLOR"] != nil {
            #expect(output.contains("\u{1B}[?25l"), "still a bar")
            #expect(!Self.hasColour(output), "no colour: \(output.debugDescription)")
            #expect(!output.contains("\u{1B}[0m"), "nor a reset of colours: \(output.debugDescription)")
        } else {
            #expect(!output.contains("\u{1B}[?25l") && !output.contains("\u{1B}[K"), "plain lines: \(output.debugDescription)")
            #expect(output.contains("[1/3] download "))
            #expect(Self.hasColour(output) == environment.isEmpty, "colour only where TERM allows")
        }
    }

    static func hasColour(_ s: String) -> Bool {
        ["\u{1B}[31m", "\u{1B}[32m", "\u{1B}[33m"].contains { s.contains($0) }
    }

    /// `s` without escape sequences and carriage returns: what the terminal shows.
    static func visible(_ s: String) -> String {
        var out = ""
        var escape = false
        var csi = false
        for c in s {
            if escape {
                if c == "[" && !csi { csi = true; continue }
                if c.isLetter { escape = false; csi = false }
                continue
            }
            if c == "\u{1B}" { escape = true; continue }
            if c == "\r" { out = ""; continue }
            out.append(c)
        }
        return out
    }
}
