import Foundation
import Testing

/// Manifest input that was accepted, or refused in words that did not help, as the real binary
/// reports it: every command that reads the manifest refuses it alike (exit 65), with the line
/// and a caret, before anything is made or fetched.
@Suite(.timeLimit(.minutes(10)))
struct ManifestInputTests {
    static let commands: [[String]] = [["validate"], ["plan"], ["apply", "--progress", "none"]]

    /// `to: |` made a file named `a.bin\n`.
    @Test(arguments: commands)
    func aLineBreakInAPathIsRefused(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads:\n  - url: http://127.0.0.1:9/a.bin\n    to: |\n      a.bin\n")
        let r = try await harness.run(command)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr == """
            syncr.yml:4:9: error: downloads[0].to: a path cannot contain a line break or control character, found \\u{A} at its end (a `|` or `>` block keeps the line's break); write the path on the key's line, or start the block with `|-`
                to: |
                    ^

            """, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.folder).filter { !$0.hasPrefix(".std") } == ["syncr.yml"])
    }

    /// `?token=${TOK}` with TOK=a#b sent `?token=a`. Neither the value nor its tail is printed.
    @Test(arguments: commands)
    func aHashFromAVariableInAURLIsRefused(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads:\n  - { url: \"http://127.0.0.1:9/b.txt?v=${TOK}\", to: b.txt }\n")
        let r = try await harness.run(command, environment: ["TOK": "s3cr3t#tail"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("syncr.yml:3:12: error: downloads[0].url: the value of ${TOK} holds a '#', which in a URL starts the fragment, never sent (what follows it would be cut off); percent-encode it as %23 in TOK (the value is not shown)\n"),
                "\(r.stderr)")
        #expect(!r.allOutput.contains("s3cr3t") && !r.allOutput.contains("tail"), "\(r.allOutput)")
    }

    @Test func aNestedDefaultIsRefused() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads:\n  - { url: \"http://127.0.0.1:9/${A:-${B}}\", to: b.txt }\n")
        let r = try await harness.run(["validate"], environment: ["B": "b"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("syncr.yml:3:12: error: downloads[0].url: '${A:-${B}}': a default cannot hold another ${...}; set A, or write the default out\n"),
                "\(r.stderr)")
    }

    /// `cache: ~/.cache/syncr` made a folder named `~` beside the manifest; `./~` names one.
    @Test(arguments: commands)
    func aLeadingTildeIsRefusedAndDotSlashTildeTaken(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ncache: ~/.cache/syncr\ndownloads: []\n")
        let r = try await harness.run(command, environment: ["HOME": "/home/me"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr == """
            syncr.yml:2:8: error: cache: syncr does not expand ~ (nor ${HOME} in a path): write the path itself (/home/me/.cache/syncr), or ./~/.cache/syncr for a folder really named ~
            cache: ~/.cache/syncr
                   ^

            """, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/~"))

        try harness.write("syncr.yml", "version: 1\ncache: ./~/cache\ndownloads: []\n")
        let taken = try await harness.run(command)
        #expect(taken.status == 0, "\(taken.stderr)")
    }

    /// `cache: .` passed validate, plan and apply; then `syncr lock` failed, and `plan --locked`
    /// said to run it.
    @Test(arguments: commands + [["lock"], ["plan", "--locked"]])
    func aCacheInTheManifestsFolderIsRefused(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ncache: .\ndownloads:\n  - { url: \"http://127.0.0.1:9/a.bin\", to: out/a.bin }\n")
        let r = try await harness.run(command)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("syncr.yml:2:8: error: cache: \".\": it is the manifest's own folder: "), "\(r.stderr)")
        #expect(r.stderr.contains("give the cache a folder of its own (e.g. cache: .syncr-cache)\ncache: .\n       ^\n"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/records.journal"))
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/syncr.lock"))
    }

    /// `--cache .` is the same mistake on the command line (exit 64, as other `--cache` ones).
    @Test(arguments: [["plan"], ["apply", "--progress", "none"], ["lock"]])
    func aCommandLineCacheInTheManifestsFolderIsRefused(command: [String]) async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "version: 1\ndownloads:\n  - { url: \"http://127.0.0.1:9/a.bin\", to: out/a.bin }\n")
        for cache in [".", "./", ".."] {
            let r = try await harness.run(command + ["--cache", cache])
            #expect(r.status == 64, "\(cache): \(r.stderr)")
            #expect(r.stderr.hasPrefix("syncr: error: --cache \(cache): it "), "\(cache): \(r.stderr)")
            #expect(r.stderr.hasSuffix("give the cache a folder of its own (e.g. --cache .syncr-cache)\n"), "\(cache): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: harness.folder + "/records.journal"))
        }
    }

    /// A Latin-1 `é` got libyaml's "invalid trailing UTF-8 octet", one character past it.
    @Test func aManifestInLatin1IsRefusedWithAdvice() async throws {
        let harness = try CLIHarness()
        let bytes = Array("version: 1\n# caf".utf8) + [0xE9] + Array("\ndownloads: []\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: harness.folder + "/syncr.yml"))
        let r = try await harness.run(["validate"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr == """
            syncr.yml:2:6: error: the manifest is not UTF-8: byte 0xE9 here starts no UTF-8 character (Latin-1 or Windows-1252 text, as some editors save an accented letter, is not UTF-8); save it as UTF-8
            # caf\u{FFFD}
                 ^

            """, "\(r.stderr)")
    }
}
