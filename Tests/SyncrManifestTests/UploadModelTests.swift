import Testing
@testable import SyncrManifest

/// `uploads:` decoded into the model.
@Suite(.timeLimit(.minutes(10))) struct UploadModelTests {
    @Test func fullUploadsManifest() throws {
        let yaml = """
            version: 1
            defaults:
              retries: 2
              timeout: 10s
              headers: { User-Agent: syncr, Accept: "*/*" }
            downloads:
              - url: https://example.com/a
                to: a
            uploads:
              - from: build/app.tar
                to: https://uploads.example.com/api/upload
                method: post
                field: artifact
                fields: { build: "${CI_PIPELINE_ID}", channel: nightly, "files[]": x }
                headers: { Authorization: "Bearer ${UPLOAD_TOKEN}", user-agent: uploader }
                content_type: application/x-tar
                retry: true
                retries: 3
              - from: /srv/out/../site/
                to: https://dav.example.com/site.zip
                method: PUT
                zip: true
                deterministic: false
                timeout: 2m
              - from: ../shared/notes.txt
                to: http://127.0.0.1:8080/upload/notes.txt
                method: Put
                content_type: "text/plain; charset=utf-8"
              - from: dist
                to: https://uploads.example.com/api/upload
                zip: true
            """
        let m = try parse(yaml, environment: ["CI_PIPELINE_ID": "4711", "UPLOAD_TOKEN": "tok-123"])
        #expect(m.downloads.count == 1)
        #expect(m.uploads.count == 4)

        let a = m.uploads[0]
        #expect(a.index == 0)
        #expect(a.location == SourceLocation(file: "syncr.yml", line: 10, column: 3))
        #expect(a.from == "build/app.tar")
        #expect(a.source == "/work/proj/build/app.tar")
        #expect(a.url == Template(literal: "https://uploads.example.com/api/upload"))
        #expect(a.method == .post)
        #expect(a.field == "artifact")
        #expect(a.fields == [
            Upload.FormField(name: "build",
                             value: Template(written: "${CI_PIPELINE_ID}", expanded: "4711", secrets: ["4711"])),
            Upload.FormField(name: "channel", value: Template(literal: "nightly")),
            Upload.FormField(name: "files[]", value: Template(literal: "x")),
        ])
        #expect(a.contentType == "application/x-tar")
        #expect(a.retryPost)
        #expect(!a.zip)
        #expect(a.deterministic)
        // Entry headers merge over the defaults by case-insensitive name, in the defaults' order.
        #expect(a.settings == Settings(
            jobs: 4, retries: 3, timeoutMilliseconds: 10_000,
            headers: [Header(name: "user-agent", value: Template(literal: "uploader")),
                      Header(name: "Accept", value: Template(literal: "*/*")),
                      Header(name: "Authorization",
                             value: Template(written: "Bearer ${UPLOAD_TOKEN}",
                                             expanded: "Bearer tok-123", secrets: ["tok-123"]))]).timeoutWrittenInManifest)

        let b = m.uploads[1]
        #expect(b.from == "/srv/out/../site/")
        #expect(b.source == "/srv/site")
        #expect(b.method == .put)
        #expect(b.field == "file")
        #expect(b.fields.isEmpty)
        #expect(b.contentType == nil)
        #expect(!b.retryPost)
        #expect(b.zip)
        #expect(!b.deterministic)
        #expect(b.settings.timeoutMilliseconds == 120_000)
        #expect(b.settings.retries == 2)
        #expect(b.settings.headers == m.defaults.headers)

        let c = m.uploads[2]
        #expect(c.source == "/work/shared/notes.txt")  // leaving the folder is fine for reading
        #expect(c.method == .put)
        #expect(c.contentType == "text/plain; charset=utf-8")

        // Same URL as the first, different source: not a duplicate.
        let d = m.uploads[3]
        #expect(d.source == "/work/proj/dist")
        #expect(d.method == .post && d.zip && d.deterministic)
        #expect(d.settings == m.defaults)

        #expect(m.secrets == ["tok-123", "4711"])
    }

    @Test func builtInValuesForAMinimalEntry() throws {
        let m = try parse("""
            version: 1
            uploads:
              - { from: out.bin, to: "https://h.example/u" }
            """)
        let u = try #require(m.uploads.first)
        #expect(u == Upload(index: 0, location: SourceLocation(file: "syncr.yml", line: 3, column: 3),
                            from: "out.bin", source: "/work/proj/out.bin",
                            url: Template(literal: "https://h.example/u"), settings: .builtIn))
        #expect(u.method == .post && u.field == "file" && u.fields.isEmpty && u.contentType == nil)
        #expect(!u.retryPost && !u.zip && u.deterministic)
        #expect(m.downloads.isEmpty)
    }

    @Test(arguments: ["version: 1\n", "version: 1\nuploads: []\n", "version: 1\nuploads:\n",
                      "version: 1\nuploads: ~\ndownloads: []\n"])
    func emptyOrMissingUploadsIsValid(yaml: String) throws {
        #expect(try parse(yaml).uploads.isEmpty)
    }

    @Test func emptyFieldsMappingIsValid() throws {
        let m = try parse("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/u", fields: {} }
              - { from: b, to: "https://h.example/u", fields: }
            """)
        #expect(m.uploads.allSatisfy { $0.fields.isEmpty })
    }

    @Test func existenceIsNotCheckedAtParseTime() throws {
        let m = try parse("""
            version: 1
            uploads:
              - { from: /nonexistent-syncr-test-folder/x, to: "https://h.example/u" }
            """)
        #expect(m.uploads[0].source == "/nonexistent-syncr-test-folder/x")
    }

    @Test func sameSourceAndURLWithAnotherMethodIsNotADuplicate() throws {
        let m = try parse("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/u" }
              - { from: a, to: "https://h.example/u", method: put }
            """)
        #expect(m.uploads.map(\.method) == [.post, .put])
    }

    @Test func secretsFromUploadURLsHeadersAndFields() throws {
        let yaml = """
            version: 1
            uploads:
              - from: a
                to: "https://${USER_INFO}@h.example/u?key=${URL_KEY}"
                headers: { X-Token: "${HEADER_SECRET}" }
                fields: { token: "${FIELD_SECRET}", plain: text }
            """
        let env = ["USER_INFO": "bob:pw-1", "URL_KEY": "url-key-2", "HEADER_SECRET": "hdr-3",
                   "FIELD_SECRET": "field-secret-4"]
        let m = try parse(yaml, environment: env)
        // "Ym9iOnB3LTE=" is base64("bob:pw-1"), the Basic credentials curl would send for it.
        #expect(Set(m.secrets) == ["bob:pw-1", "url-key-2", "hdr-3", "field-secret-4", "Ym9iOnB3LTE="])
        #expect(m.secrets.first == "field-secret-4")  // longest first, for scrubbing
        #expect(m.uploads[0].url.description == "https://${USER_INFO}@h.example/u?key=${URL_KEY}")
    }
}
