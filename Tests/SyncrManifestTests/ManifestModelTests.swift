import Testing
@testable import SyncrManifest

@Suite(.timeLimit(.minutes(10))) struct ManifestModelTests {
    @Test func fullManifestRoundTrip() throws {
        let yaml = """
            version: 1
            cache: ../shared-cache
            defaults:
              jobs: 8
              retries: 3
              timeout: 1m30s
              headers: { User-Agent: "syncr", Accept: "*/*" }
            downloads:
              - url: https://example.com/data/model.bin
                to: vendor/model.bin
                sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
                md5: D41D8CD98F00B204E9800998ECF8427E
                headers: { Authorization: "Bearer ${ARTIFACT_TOKEN}", user-agent: custom }
                retries: 0
              - url: http://mirror.example.org:8080/x?y=1#z
                to: /tmp/elsewhere/x.bin
                allow_outside: true
                timeout: 500ms
            """
        let m = try parse(yaml, environment: ["ARTIFACT_TOKEN": "s3cret"])
        #expect(m.path == "syncr.yml")
        #expect(m.directory == "/work/proj")
        #expect(m.version == 1)
        #expect(m.cache == "../shared-cache")
        #expect(m.cacheDirectory == "/work/shared-cache")
        #expect(m.defaults == Settings(
            jobs: 8, retries: 3, timeoutMilliseconds: 90_000,
            headers: [Header(name: "User-Agent", value: Template(literal: "syncr")),
                      Header(name: "Accept", value: Template(literal: "*/*"))]).timeoutWrittenInManifest)
        #expect(m.downloads.count == 2)

        let a = m.downloads[0]
        #expect(a.index == 0)
        #expect(a.location == SourceLocation(file: "syncr.yml", line: 9, column: 3))
        #expect(a.url == Template(literal: "https://example.com/data/model.bin"))
        #expect(a.to == "vendor/model.bin")
        #expect(a.destination == "/work/proj/vendor/model.bin")
        #expect(a.allowOutside == false)
        #expect(a.checksums == [
            .sha256("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
            .md5("d41d8cd98f00b204e9800998ecf8427e"),
        ])
        // Entry headers merge over the defaults by case-insensitive name, in the defaults' order.
        #expect(a.settings == Settings(
            jobs: 8, retries: 0, timeoutMilliseconds: 90_000,
            headers: [Header(name: "user-agent", value: Template(literal: "custom")),
                      Header(name: "Accept", value: Template(literal: "*/*")),
                      Header(name: "Authorization",
                             value: Template(written: "Bearer ${ARTIFACT_TOKEN}",
                                             expanded: "Bearer s3cret", secrets: ["s3cret"]))]).timeoutWrittenInManifest)

        let b = m.downloads[1]
        #expect(b.destination == "/tmp/elsewhere/x.bin")
        #expect(b.allowOutside)
        #expect(b.checksums.isEmpty)
        #expect(b.settings.timeoutMilliseconds == 500)
        #expect(b.settings.retries == 3)
        #expect(b.settings.headers == m.defaults.headers)
        #expect(m.secrets == ["s3cret"])
    }

    @Test(arguments: ["version: 1\n", "version: 1\ndownloads: []\n", "version: 1\ndownloads:\n",
                      "version: 1\ndefaults:\ndownloads:\n"])
    func emptyManifestIsValid(yaml: String) throws {
        let m = try parse(yaml)
        #expect(m.downloads.isEmpty)
        #expect(m.defaults == .builtIn)
        #expect(m.cache == ".syncr/cache")
        #expect(m.cacheDirectory == "/work/proj/.syncr/cache")
    }

    @Test func absoluteCache() throws {
        #expect(try parse("version: 1\ncache: /var/cache//syncr/./x/..\n").cacheDirectory
            == "/var/cache/syncr")
    }

    @Test func directoryIsNormalized() throws {
        let m = try ManifestLoader.parse(text: "version: 1\ndownloads: [{url: 'http://h/', to: f}]\n",
                                         path: "m.yml", directory: "/a/./b/../c/", environment: [:])
        #expect(m.directory == "/a/c")
        #expect(m.downloads[0].destination == "/a/c/f")
    }

    @Test func duplicateHeaderNamesIgnoreCase() {
        let yaml = """
            version: 1
            defaults:
              headers:
                Accept: a
                accept: b
            """
        #expect(errors(yaml) == """
            syncr.yml:5:5: error: defaults.headers.accept: duplicate header 'accept' (first at line 4; header names ignore case)
                accept: b
                ^
            """)
    }

    @Test func headerValueWithLineBreak() {
        let yaml = "version: 1\ndefaults:\n  headers: { X: \"a\\r\\nEvil: 1\" }\n"
        #expect(errors(yaml) == """
            syncr.yml:3:17: error: defaults.headers.X: a header value cannot contain a line break or NUL
              headers: { X: "a\\r\\nEvil: 1" }
                            ^
            """)
    }
}
