@testable import SyncrManifest
import Testing

/// The lockfile format: named after the manifest, written deterministically, read back as written.
@Suite(.timeLimit(.minutes(10))) struct LockfileFormatTests {
    @Test(arguments: [("syncr.yml", "syncr.lock"), ("data.yaml", "data.lock"), ("ci/data.yml", "ci/data.lock"),
                      ("list", "list.lock"), (".yml", ".yml.lock"), ("a.yml.txt", "a.yml.txt.lock")])
    func namedAfterTheManifest(manifest: String, lock: String) {
        #expect(Lockfile.path(forManifest: manifest) == lock)
    }

    static let entries = [
        LockedEntry(to: "z/last.bin", url: "https://example.com/${CHANNEL}/z.bin", finalURL: "https://cdn.example.com/z.bin",
                    size: 12, etag: "\"5f-1\"", lastModified: "Tue, 01 Oct 2024 10:00:00 GMT",
                    sha256: String(repeating: "ab", count: 32)),
        LockedEntry(to: "a/\"quoted\" \\ tab\there é.bin", url: "https://example.com/a b", unzip: true),
    ]

    @Test func writesSortedAndReadsBackWhatItWrote() throws {
        let lock = Lockfile(manifest: "syncr.yml", entries: Self.entries)
        #expect(lock.entries.map(\.to) == [Self.entries[1].to, Self.entries[0].to], "sorted by destination")
        let text = lock.yaml
        #expect(text.contains("version: 1\n"))
        #expect(text.contains("    etag: \"\\\"5f-1\\\"\"\n"), "\(text)")
        #expect(text.contains("\\u0009"), "a tab is escaped")
        let read = try LockfileReader.parse(bytes: Array(text.utf8), path: "syncr.lock")
        #expect(read == lock)
        #expect(read.yaml == text, "the same lock, the same bytes")
        #expect(read.entry(to: "z/last.bin")?.size == 12)
        #expect(read.entry(to: "missing") == nil)
    }

    /// Two records of one destination, as a merge of two locks that both changed it keeps
    /// them, are refused naming both (in the form the writer writes too, which the line reader
    /// leaves to the parser for that): the second stood for both, and the manifest's other
    /// entry was said to be missing from the lock.
    @Test func aDestinationLockedTwiceIsRefusedNamingBoth() throws {
        let one = LockedEntry(to: "a.bin", url: "https://example.com/a", size: 1)
        let text = Lockfile(manifest: "syncr.yml", entries: [one, LockedEntry(to: "b.bin", url: "https://example.com/b")]).yaml
        let merged = text.replacing("  - to: \"b.bin\"\n    url: \"https://example.com/b\"",
                                    with: "  - to: \"a.bin\"\n    url: \"https://example.com/b\"")
        #expect(merged != text)
        #expect(LockfileLines.read(Array(merged.utf8)) == nil)
        #expect {
            try LockfileReader.parse(bytes: Array(merged.utf8), path: "syncr.lock")
        } throws: { error in
            "\(error)".contains("syncr.lock:10:5: error: downloads[1].to \"a.bin\" is locked twice (also downloads[0], line 7); a merge may have kept both; run 'syncr lock'")
        }
    }

    /// The line reader takes exactly what the writer writes, and gives what the YAML parser
    /// gives; a hand-edited lock (keys reordered, single quotes, flow style) goes to the parser.
    @Test func lineReaderAgreesWithTheYAMLParser() throws {
        let lock = Lockfile(manifest: "syncr.yml", entries: Self.entries)
        #expect(LockfileLines.read(Array(lock.yaml.utf8)) == lock)
        let edited = """
            version: 1
            downloads:
              - url: 'https://example.com/a'
                to: a.bin
                size: 3
              - { to: b.bin, url: "https://example.com/b", unzip: true }
            """
        #expect(LockfileLines.read(Array(edited.utf8)) == nil)
        let read = try LockfileReader.parse(bytes: Array(edited.utf8), path: "syncr.lock")
        #expect(read.entries == [LockedEntry(to: "a.bin", url: "https://example.com/a", size: 3),
                                 LockedEntry(to: "b.bin", url: "https://example.com/b", unzip: true)])
    }

    @Test(arguments: [
        ("version: 2\ndownloads: []\n", "syncr.lock:1:10: error: expected 'version: 1'"),
        ("version: 1\ndownloads:\n  - { to: a }\n", "syncr.lock:3:5: error: downloads[0]: needs 'to' and 'url'"),
        ("version: 1\ndownloads:\n  - { to: a, url: u, size: -3 }\n", "downloads[0].size: expected a whole number"),
        ("version: 1\ndownloads:\n  - { to: a, url: u, sha256: abc }\n", "downloads[0].sha256: expected 64 hex digits"),
        ("version: 1\ndownloads: {}\n", "'downloads' must be a list"),
        ("version: 1\n  bad: [\n", "syncr.lock:"),
        // A record that names two destinations locked the last one, silently.
        ("version: 1\ndownloads:\n  - to: a\n    url: u\n    to: b\n",
         "syncr.lock:5:5: error: downloads[0].to is given twice (first at line 3)"),
        // An alias to nothing is no longer a parser throw: the reader refuses it itself.
        ("version: 1\ndownloads:\n  - { to: a, url: *u }\n",
         "syncr.lock:3:19: error: the alias *u refers to no anchor"),
        // Two `downloads:` (a merge kept both): the second was not read.
        ("version: 1\ndownloads:\n  - { to: a, url: u }\ndownloads:\n  - { to: b, url: v }\n",
         "syncr.lock:4:1: error: 'downloads' is given twice (first at line 2)"),
    ])
    func refusesWhatIsNoLock(text: String, message: String) {
        #expect(LockfileLines.read(Array(text.utf8)) == nil)
        #expect {
            try LockfileReader.parse(bytes: Array(text.utf8), path: "syncr.lock")
        } throws: { error in
            let description = "\(error)"
            return description.contains(message) && description.contains("run 'syncr lock'")
        }
    }
}
