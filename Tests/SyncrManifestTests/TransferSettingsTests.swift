import Testing
@testable import SyncrManifest

/// `connections`, `min_split`, `low_speed`, `max_connections_per_host` and `fsync`.
@Suite(.timeLimit(.minutes(10))) struct TransferSettingsTests {
    @Test func builtInDefaults() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: https://example.com/a, to: a }
            """)
        let s = try #require(manifest.downloads.first).settings
        #expect(s.connections == 8)
        #expect(s.minSplit == 16 << 20)
        #expect(s.lowSpeed == 1024)
        #expect(manifest.defaults.maxConnectionsPerHost == 16)
    }

    @Test func defaultsAndPerEntryOverrides() throws {
        let manifest = try parse("""
            version: 1
            defaults: { connections: 4, min_split: 64MiB, low_speed: 10KiB, max_connections_per_host: 6 }
            downloads:
              - { url: https://example.com/a, to: a }
              - { url: https://example.com/b, to: b, connections: 1, min_split: 1048576, low_speed: 512 }
            """)
        let a = manifest.downloads[0].settings, b = manifest.downloads[1].settings
        #expect(a.connections == 4 && a.minSplit == 64 << 20 && a.lowSpeed == 10 << 10)
        #expect(b.connections == 1 && b.minSplit == 1 << 20 && b.lowSpeed == 512)
        #expect(manifest.defaults.maxConnectionsPerHost == 6)
    }

    /// `low_speed` is a rate, as the docs and the stall message (`10.0 KiB/s`) write it: a size
    /// with `/s` after it, or without. `10KiB/s` was refused as "not a size".
    @Test func lowSpeedTakesARateWithOrWithoutPerSecond() throws {
        let manifest = try parse("""
            version: 1
            defaults: { low_speed: 10KiB/s }
            downloads:
              - { url: https://example.com/a, to: a }
              - { url: https://example.com/b, to: b, low_speed: 512/s }
              - { url: https://example.com/c, to: c, low_speed: 1.5 MB/s }
              - { url: https://example.com/d, to: d, low_speed: 2KiB }
            """)
        #expect(manifest.downloads.map(\.settings.lowSpeed) == [10 << 10, 512, 1_500_000, 2 << 10])
    }

    /// A rate with no number, twice `/s`, another time unit, or zero is refused, positioned;
    /// and a size key given a rate says to remove the `/s`.
    @Test func malformedRatesAndRatesWhereASizeGoesAreRefused() {
        #expect(errors("""
            version: 1
            defaults:
              low_speed: /s
              min_split: 16MiB/s
            downloads:
              - { url: https://example.com/a, to: a, low_speed: 10KiB/s/s }
              - { url: https://example.com/b, to: b, low_speed: 10KiB/min }
              - { url: https://example.com/c, to: c, low_speed: 0/s }
              - { url: https://example.com/d, to: d, unzip: true, max_unpacked_size: 1GiB/s }
            """) == """
            syncr.yml:3:14: error: defaults.low_speed: expected a rate like 512, 10KiB/s or 1MiB/s (bytes a second), found "/s"
              low_speed: /s
                         ^
            syncr.yml:4:14: error: defaults.min_split: expected a size like 512, 64KiB or 16MiB, found "16MiB/s"; this is a size, not a rate: remove the /s
              min_split: 16MiB/s
                         ^
            syncr.yml:6:53: error: downloads[0].low_speed: expected a rate like 512, 10KiB/s or 1MiB/s (bytes a second), found "10KiB/s/s"
              - { url: https://example.com/a, to: a, low_speed: 10KiB/s/s }
                                                                ^
            syncr.yml:7:53: error: downloads[1].low_speed: expected a rate like 512, 10KiB/s or 1MiB/s (bytes a second), found "10KiB/min"
              - { url: https://example.com/b, to: b, low_speed: 10KiB/min }
                                                                ^
            syncr.yml:8:53: error: downloads[2].low_speed: expected a rate from 1 B/s to 1.0 TiB/s, found "0/s"
              - { url: https://example.com/c, to: c, low_speed: 0/s }
                                                                ^
            syncr.yml:9:74: error: downloads[3].max_unpacked_size: expected a size like 512, 64KiB or 16MiB, found "1GiB/s"; this is a size, not a rate: remove the /s
              - { url: https://example.com/d, to: d, unzip: true, max_unpacked_size: 1GiB/s }
                                                                                     ^
            """)
    }

    /// A fraction rounds down to whole bytes before the range is checked: `low_speed: 0.5` is
    /// 0 bytes a second, refused as below 1 B/s; `min_split: 0.0625MiB` is exactly 64 KiB.
    @Test func aFractionRoundsDownBeforeTheRangeIsChecked() throws {
        #expect(errors("""
            version: 1
            defaults: { low_speed: 0.5 }
            """) == """
            syncr.yml:2:24: error: defaults.low_speed: expected a rate from 1 B/s to 1.0 TiB/s, found 0.5
            defaults: { low_speed: 0.5 }
                                   ^
            """)
        let manifest = try parse("""
            version: 1
            defaults: { min_split: 0.0625MiB, low_speed: 1.5KB }
            """)
        #expect(manifest.defaults.minSplit == 64 << 10)
        #expect(manifest.defaults.lowSpeed == 1_500)
    }

    /// A stall's message says "in the manifest" only of a `timeout:` the manifest wrote, under
    /// `defaults:` or on the entry, the default's value included; it said so of any value but
    /// 30 s, also one a program set without a manifest.
    @Test func aTimeoutIsMarkedWrittenOnlyWhereTheManifestWritesIt() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: https://example.com/a, to: a }
              - { url: https://example.com/b, to: b, timeout: 30s }
            uploads:
              - { from: a, to: "https://example.com/up/a", timeout: 5s }
            """)
        #expect(!manifest.defaults.timeoutWritten)
        #expect(!manifest.downloads[0].settings.timeoutWritten)
        #expect(manifest.downloads[1].settings.timeoutWritten)
        #expect(manifest.uploads[0].settings.timeoutWritten)
        let defaults = try parse("""
            version: 1
            defaults: { timeout: 10s }
            downloads:
              - { url: https://example.com/a, to: a }
            """)
        #expect(defaults.defaults.timeoutWritten && defaults.downloads[0].settings.timeoutWritten)
        #expect(!Settings.builtIn.timeoutWritten)
    }

    /// `fsync:` is on unless `defaults:` turns it off; it is run-wide, so an entry (download or
    /// upload) may not set it, and it takes a boolean.
    @Test func fsyncIsARunWideBoolean() throws {
        #expect(try parse("version: 1\n").defaults.fsync)
        #expect(try !parse("version: 1\ndefaults: { fsync: false }\n").defaults.fsync)
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                fsync: false
            uploads:
              - from: syncr.yml
                to: https://example.com/up
                fsync: false
            """) == """
            syncr.yml:5:5: error: downloads[0].fsync: fsync applies to the whole run; set it under defaults:
                fsync: false
                ^
            syncr.yml:9:5: error: uploads[0].fsync: fsync applies to the whole run; set it under defaults:
                fsync: false
                ^
            """)
        #expect(errors("version: 1\ndefaults: { fsync: sometimes }\n").contains("defaults.fsync: expected true or false"))
    }

    @Test func perHostCapIsRunWide() {
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                max_connections_per_host: 2
            """) == """
            syncr.yml:5:5: error: downloads[0].max_connections_per_host: max_connections_per_host applies to the whole run; set it under defaults:
                max_connections_per_host: 2
                ^
            """)
    }

    @Test func outOfRangeAndMalformedValues() {
        #expect(errors("""
            version: 1
            defaults:
              connections: 0
              min_split: 1KiB
              low_speed: fast
            """) == """
            syncr.yml:3:16: error: defaults.connections: expected an integer from 1 to 64, found 0
              connections: 0
                           ^
            syncr.yml:4:14: error: defaults.min_split: expected a size from 64.0 KiB to 1.0 TiB, found "1KiB"
              min_split: 1KiB
                         ^
            syncr.yml:5:14: error: defaults.low_speed: expected a rate like 512, 10KiB/s or 1MiB/s (bytes a second), found "fast"
              low_speed: fast
                         ^
            """)
    }

    @Test func typoGetsASuggestion() {
        #expect(errors("""
            version: 1
            defaults: { conections: 4 }
            """).contains("did you mean 'connections'?"))
    }
}

/// `unzip` and `strip_components`.
@Suite(.timeLimit(.minutes(10))) struct UnzipKeysTests {
    @Test func unzipMakesToAFolder() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: https://example.com/tool.tar.gz, to: vendor/tool/, unzip: true, strip_components: 1 }
              - { url: https://example.com/b.zip, to: b, unzip: true }
            """)
        #expect(manifest.downloads[0].unzip && manifest.downloads[0].stripComponents == 1)
        #expect(manifest.downloads[0].destination == "/work/proj/vendor/tool")
        #expect(manifest.downloads[1].unzip && manifest.downloads[1].stripComponents == 0)
    }

    @Test func stripComponentsNeedsUnzip() {
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                strip_components: 2
            """) == """
            syncr.yml:5:5: error: downloads[0].strip_components: strip_components applies only with unzip: true; remove it, or set unzip: true
                strip_components: 2
                ^
            """)
    }

    @Test func unzipCannotTakeTheManifestsOwnFolder() {
        #expect(errors("""
            version: 1
            downloads:
              - { url: https://example.com/a.zip, to: ., unzip: true }
            """).contains("is the manifest's own folder"))
    }

    /// Unpacking replaces the folder as a whole: one above the manifest's would take the
    /// manifest, its cache and everything beside them, even where allow_outside is set.
    @Test(arguments: ["..", "../..", "/", "/work"])
    func unzipCannotTakeAFolderHoldingTheManifests(_ to: String) {
        let text = errors("""
            version: 1
            downloads:
              - { url: https://example.com/a.zip, to: "\(to)", unzip: true, allow_outside: true }
            """)
        #expect(text.contains("holds the manifest's own folder") || text.contains("is the manifest's own folder"), "\(text)")
    }

    /// A destination in the cache folder would overwrite (or be taken for) the cache's own
    /// files, a folder unpacked over the cache would replace it, and a file cannot be written
    /// where a folder above the cache is.
    @Test(arguments: [
        ("", "{ url: https://example.com/a, to: .syncr/cache/records.journal }", "is inside syncr's cache folder"),
        ("", "{ url: https://example.com/a.zip, to: .syncr, unzip: true }", "holds syncr's cache folder"),
        ("cache: c\n", "{ url: https://example.com/a.zip, to: c, unzip: true }", "is inside syncr's cache folder"),
        ("cache: c/d\n", "{ url: https://example.com/a.zip, to: ./c, unzip: true }", "holds syncr's cache folder"),
        // A file where the cache's own folders are: apply could only fail ("move it away"),
        // and the folder came back on every run.
        ("", "{ url: https://example.com/a, to: .syncr }", "is a folder that holds syncr's cache folder"),
        ("cache: c/d\n", "{ url: https://example.com/a, to: c, allow_outside: true }", "is a folder that holds syncr's cache folder"),
        // Nor the manifest or its lockfile: every later run would stop at them (exit 65).
        ("", "{ url: https://example.com/a, to: ./syncr.yml }", "\"./syncr.yml\" is this manifest itself"),
        ("", "{ url: https://example.com/a, to: syncr.lock }", "\"syncr.lock\" is this manifest's lockfile"),
        // A cache that is the manifest's folder is refused itself (CacheFolderTests), once.
        ("cache: .\n", "{ url: https://example.com/a, to: out/a.bin }", "it is the manifest's own folder"),
    ])
    func destinationsStayClearOfTheCache(_ cache: String, _ entry: String, _ message: String) {
        let text = errors("version: 1\n\(cache)downloads:\n  - \(entry)\n")
        #expect(text.contains(message), "\(text)")
    }
}
