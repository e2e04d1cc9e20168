import Testing
@testable import SyncrManifest

/// Exact rendered diagnostics for `uploads:`, caret included.
@Suite(.timeLimit(.minutes(10))) struct UploadErrorTests {
    @Test func uploadsNotASequence() {
        #expect(errors("""
            version: 1
            uploads:
              from: a
            """) == """
            syncr.yml:3:3: error: uploads: expected a sequence, found a mapping
              from: a
              ^
            """)
    }

    @Test func entryNotAMapping() {
        #expect(errors("""
            version: 1
            uploads:
              - build/app.tar
            """) == """
            syncr.yml:3:5: error: uploads[0]: expected a mapping, found "build/app.tar"
              - build/app.tar
                ^
            """)
    }

    @Test func missingFromAndTo() {
        #expect(errors("""
            version: 1
            uploads:
              - method: put
            """) == """
            syncr.yml:3:5: error: uploads[0]: missing required key 'from'
              - method: put
                ^
            syncr.yml:3:5: error: uploads[0]: missing required key 'to'
              - method: put
                ^
            """)
    }

    @Test func emptyFrom() {
        #expect(errors("""
            version: 1
            uploads:
              - from: ""
                to: https://h.example/u
            """) == """
            syncr.yml:3:11: error: uploads[0].from: expected a file or folder path, found an empty string
              - from: ""
                      ^
            """)
    }

    @Test func fromWithNUL() {
        #expect(errors("version: 1\nuploads:\n  - { from: \"a\\0b\", to: \"https://h.example/u\" }\n") == """
            syncr.yml:3:13: error: uploads[0].from: a path cannot contain a NUL byte
              - { from: "a\\0b", to: "https://h.example/u" }
                        ^
            """)
    }

    @Test func fromNotAString() {
        #expect(errors("""
            version: 1
            uploads:
              - from: [a, b]
                to: https://h.example/u
            """) == """
            syncr.yml:3:11: error: uploads[0].from: expected a file or folder path, found a sequence
              - from: [a, b]
                      ^
            """)
    }

    @Test func toNotAnHTTPURL() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: ftp://h.example/u
            """) == """
            syncr.yml:4:9: error: uploads[0].to: expected an http(s) URL, found "ftp://h.example/u": its scheme is not http, https or s3 (the only ones syncr speaks)
                to: ftp://h.example/u
                    ^
            """)
    }

    @Test func toIsAPathNotAURL() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: out/a
            """) == """
            syncr.yml:4:9: error: uploads[0].to: expected an http(s) URL, found "out/a": it has no scheme; write http://, https:// or s3:// in front
                to: out/a
                    ^
            """)
    }

    @Test func toNotAURLOnceExpandedDoesNotShowTheValue() {
        let rendered = errors("""
            version: 1
            uploads:
              - from: a
                to: "https://${UPLOAD_HOST}/u"
            """, environment: ["UPLOAD_HOST": "bad host"])
        #expect(rendered == """
            syncr.yml:4:9: error: uploads[0].to: expected an http(s) URL, found "https://${UPLOAD_HOST}/u", which is not one once its ${...} references are expanded: a URL cannot contain a space; write each as %20 (the expanded value is not shown)
                to: "https://${UPLOAD_HOST}/u"
                    ^
            """)
    }

    @Test func toWithUnsetVariable() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: "https://h.example/u?k=${KEY}"
            """) == """
            syncr.yml:4:9: error: uploads[0].to: environment variable KEY is not set (set it, or write ${KEY:-default})
                to: "https://h.example/u?k=${KEY}"
                    ^
            """)
    }

    @Test func unknownMethod() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                method: patch
            """) == """
            syncr.yml:5:13: error: uploads[0].method: expected post or put, found "patch"
                method: patch
                        ^
            """)
    }

    @Test func postOnlyKeysWithPut() {
        // `method:` written after the keys it rules out still rules them out.
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                field: upload
                fields: { a: b }
                retry: true
                method: put
            """) == """
            syncr.yml:5:5: error: uploads[0].field: field applies to method: post only; remove it, or set method: post
                field: upload
                ^
            syncr.yml:6:5: error: uploads[0].fields: fields applies to method: post only; remove it, or set method: post
                fields: { a: b }
                ^
            syncr.yml:7:5: error: uploads[0].retry: retry applies to method: post only; remove it, or set method: post
                retry: true
                ^
            """)
    }

    @Test func postOnlyKeysAreCheckedWhenTheMethodIsInvalid() {
        // An invalid method is reported once; the post-only keys are judged on their own.
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                method: get
                retry: yes
            """) == """
            syncr.yml:5:13: error: uploads[0].method: expected post or put, found "get"
                method: get
                        ^
            syncr.yml:6:12: error: uploads[0].retry: expected true or false, found "yes"
                retry: yes
                       ^
            """)
    }

    @Test func badFieldNames() {
        #expect(errors("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/u", field: "" }
              - { from: b, to: "https://h.example/u", field: 'my"file' }
              - { from: c, to: "https://h.example/u", field: "a\\r\\nX-Evil: 1" }
              - { from: d, to: "https://h.example/u", field: {} }
            """) == """
            syncr.yml:3:50: error: uploads[0].field: expected a form field name, found an empty string
              - { from: a, to: "https://h.example/u", field: "" }
                                                             ^
            syncr.yml:4:50: error: uploads[1].field: "my\\"file" is not a valid form field name; it cannot contain '"', a line break or another control character
              - { from: b, to: "https://h.example/u", field: 'my"file' }
                                                             ^
            syncr.yml:5:50: error: uploads[2].field: "a\\r\\nX-Evil: 1" is not a valid form field name; it cannot contain '"', a line break or another control character
              - { from: c, to: "https://h.example/u", field: "a\\r\\nX-Evil: 1" }
                                                             ^
            syncr.yml:6:50: error: uploads[3].field: expected a form field name, found a mapping
              - { from: d, to: "https://h.example/u", field: {} }
                                                             ^
            """)
    }

    @Test func fieldsNotAMapping() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                fields: [build, channel]
            """) == """
            syncr.yml:5:13: error: uploads[0].fields: expected a mapping, found a sequence
                fields: [build, channel]
                        ^
            """)
    }

    @Test func badFieldsEntries() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                fields:
                  "": x
                  'a"b': x
                  nested: { x: y }
                  empty:
                  literal: "one\\ntwo"
                  ok: 2024
            """) == """
            syncr.yml:6:7: error: uploads[0].fields.: expected a form field name, found an empty string
                  "": x
                  ^
            syncr.yml:7:7: error: uploads[0].fields.a"b: "a\\"b" is not a valid form field name; it cannot contain '"', a line break or another control character
                  'a"b': x
                  ^
            syncr.yml:8:15: error: uploads[0].fields.nested: expected a string, found a mapping
                  nested: { x: y }
                          ^
            syncr.yml:9:13: error: uploads[0].fields.empty: expected a string, found nothing
                  empty:
                        ^
            syncr.yml:10:16: error: uploads[0].fields.literal: a form field value cannot contain a line break or NUL
                  literal: "one\\ntwo"
                           ^
            """)
    }

    @Test func fieldValueWithLineBreakAfterExpansionIsNotShown() {
        let rendered = errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                fields: { note: "${NOTE}" }
            """, environment: ["NOTE": "secret-line\r\nX-Evil: 1"])
        #expect(rendered == """
            syncr.yml:5:21: error: uploads[0].fields.note: the value contains a line break or NUL after expanding its ${...} references (the value is not shown)
                fields: { note: "${NOTE}" }
                                ^
            """)
        #expect(!rendered.contains("secret-line"))
    }

    @Test func zipAndDeterministic() {
        #expect(errors("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/1", zip: "true" }
              - { from: b, to: "https://h.example/2", deterministic: true }
              - { from: c, to: "https://h.example/3", zip: false, deterministic: false }
              - { from: d, to: "https://h.example/4", zip: 1, deterministic: true }
              - { from: e, to: "https://h.example/5", zip: true, deterministic: maybe }
            """) == """
            syncr.yml:3:48: error: uploads[0].zip: expected true or false, found the string "true" (remove the quotes)
              - { from: a, to: "https://h.example/1", zip: "true" }
                                                           ^
            syncr.yml:4:43: error: uploads[1].deterministic: deterministic applies only with zip: true; remove it, or set zip: true
              - { from: b, to: "https://h.example/2", deterministic: true }
                                                      ^
            syncr.yml:5:55: error: uploads[2].deterministic: deterministic applies only with zip: true; remove it, or set zip: true
              - { from: c, to: "https://h.example/3", zip: false, deterministic: false }
                                                                  ^
            syncr.yml:6:48: error: uploads[3].zip: expected true or false, found 1
              - { from: d, to: "https://h.example/4", zip: 1, deterministic: true }
                                                           ^
            syncr.yml:7:69: error: uploads[4].deterministic: expected true or false, found "maybe"
              - { from: e, to: "https://h.example/5", zip: true, deterministic: maybe }
                                                                                ^
            """)
    }

    @Test func contentType() {
        #expect(errors("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/1", content_type: tar }
              - { from: b, to: "https://h.example/2", content_type: "application/x tar" }
              - { from: c, to: "https://h.example/3", content_type: "text/plain\\r\\nX-Evil: 1" }
              - { from: d, to: "https://h.example/4", content_type: "/json" }
            """) == """
            syncr.yml:3:57: error: uploads[0].content_type: expected a media type like application/x-tar, found "tar"
              - { from: a, to: "https://h.example/1", content_type: tar }
                                                                    ^
            syncr.yml:4:57: error: uploads[1].content_type: expected a media type like application/x-tar, found "application/x tar"
              - { from: b, to: "https://h.example/2", content_type: "application/x tar" }
                                                                    ^
            syncr.yml:5:57: error: uploads[2].content_type: a content type cannot contain a line break or NUL
              - { from: c, to: "https://h.example/3", content_type: "text/plain\\r\\nX-Evil: 1" }
                                                                    ^
            syncr.yml:6:57: error: uploads[3].content_type: expected a media type like application/x-tar, found "/json"
              - { from: d, to: "https://h.example/4", content_type: "/json" }
                                                                    ^
            """)
    }

    @Test func downloadOnlyAndRunWideSettings() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                connections: 4
                min_split: 1MiB
                low_speed: 1KiB
                jobs: 2
                max_connections_per_host: 2
            """) == """
            syncr.yml:5:5: error: uploads[0].connections: connections applies to downloads only; an upload is sent as one request, so remove it here
                connections: 4
                ^
            syncr.yml:6:5: error: uploads[0].min_split: min_split applies to downloads only; an upload is sent as one request, so remove it here
                min_split: 1MiB
                ^
            syncr.yml:7:5: error: uploads[0].low_speed: low_speed applies to downloads only; an upload is sent as one request, so remove it here
                low_speed: 1KiB
                ^
            syncr.yml:8:5: error: uploads[0].jobs: jobs applies to the whole run; set it under defaults:
                jobs: 2
                ^
            syncr.yml:9:5: error: uploads[0].max_connections_per_host: max_connections_per_host applies to the whole run; set it under defaults:
                max_connections_per_host: 2
                ^
            """)
    }

    @Test func settingsAreCheckedAsForDownloads() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                retries: 101
                timeout: soon
            """) == """
            syncr.yml:5:14: error: uploads[0].retries: expected an integer from 0 to 100, found 101
                retries: 101
                         ^
            syncr.yml:6:14: error: uploads[0].timeout: expected a duration like 30s, 500ms or 1m30s, found "soon"
                timeout: soon
                         ^
            """)
    }

    @Test func contentTypeHeaderOnAnUpload() {
        #expect(errors("""
            version: 1
            uploads:
              - from: a
                to: https://h.example/u
                headers: { content-type: text/plain }
            """) == """
            syncr.yml:5:16: error: uploads[0].headers.content-type: set the file's type with content_type: instead of a Content-Type header (a post's Content-Type is multipart/form-data with its boundary)
                headers: { content-type: text/plain }
                           ^
            """)
    }

    /// A `Content-Type` under `defaults:` is the downloads' (an API may want one): an upload
    /// sending it instead of its multipart/form-data type and boundary was unreadable to the
    /// server, and recorded as sent.
    @Test func aDefaultContentTypeIsNotAnUploads() throws {
        let manifest = try parse("""
            version: 1
            defaults:
              headers: { Content-Type: application/json, X-Team: a }
            downloads:
              - { url: https://h.example/a, to: a }
            uploads:
              - { from: f, to: https://h.example/u }
              - { from: f, to: https://h.example/v/f, method: put }
            """)
        #expect(manifest.downloads[0].settings.headers.map(\.name) == ["Content-Type", "X-Team"])
        for upload in manifest.uploads { #expect(upload.settings.headers.map(\.name) == ["X-Team"]) }
    }

    @Test func unknownKeysGetSuggestions() {
        #expect(errors("""
            version: 1
            upload:
              - from: a
            uploads:
              - url: https://h.example/u
                source: a
                form: { a: b }
                contnet_type: text/plain
                sha256: abc
            """) == """
            syncr.yml:2:1: error: upload: unknown key 'upload'; did you mean 'uploads'?
            upload:
            ^
            syncr.yml:5:5: error: uploads[0].url: unknown key 'url'; did you mean 'to'?
              - url: https://h.example/u
                ^
            syncr.yml:5:5: error: uploads[0]: missing required key 'from'
              - url: https://h.example/u
                ^
            syncr.yml:5:5: error: uploads[0]: missing required key 'to'
              - url: https://h.example/u
                ^
            syncr.yml:6:5: error: uploads[0].source: unknown key 'source'; did you mean 'from'?
                source: a
                ^
            syncr.yml:7:5: error: uploads[0].form: unknown key 'form'; did you mean 'fields'?
                form: { a: b }
                ^
            syncr.yml:8:5: error: uploads[0].contnet_type: unknown key 'contnet_type'; did you mean 'content_type'?
                contnet_type: text/plain
                ^
            syncr.yml:9:5: error: uploads[0].sha256: unknown key 'sha256'; valid keys are: from, to, method, field, fields, content_type, retry, zip, deterministic, multipart_threshold, part_size, retries, timeout, headers, ca_cert, trusted_redirects, max_redirects, allow_insecure_redirects, netrc, s3, insecure
                sha256: abc
                ^
            """)
    }

    @Test(arguments: [
        ("URL", "to"), ("url", "to"), ("source", "from"), ("file", "from"), ("path", "from"),
        ("mehtod", "method"), ("verb", "method"), ("feild", "field"), ("form", "fields"),
        ("content-type", "content_type"), ("mime", "content_type"), ("retires", "retries"),
    ])
    func didYouMeanInAnUpload(typo: String, meant: String) {
        #expect(KeySuggestion.suggestion(for: typo, among: ManifestKeys.upload) == meant)
    }

    /// The synonyms that now mean `from` in an upload still mean what they did in a download.
    @Test(arguments: [("URL", "url"), ("source", "url"), ("src", "url"), ("file", "to"),
                      ("path", "to"), ("link", "url")])
    func downloadSuggestionsUnchanged(typo: String, meant: String) {
        #expect(KeySuggestion.suggestion(for: typo, among: ManifestKeys.download) == meant)
    }

    @Test func uploadKeysUnderDefaults() {
        #expect(errors("""
            version: 1
            defaults:
              method: put
              zip: true
              retry: 3
            """) == """
            syncr.yml:3:3: error: defaults.method: method is set on each upload entry, not under defaults:
              method: put
              ^
            syncr.yml:4:3: error: defaults.zip: zip is set on each upload entry, not under defaults:
              zip: true
              ^
            syncr.yml:5:3: error: defaults.retry: unknown key 'retry'; did you mean 'retries'?
              retry: 3
              ^
            """)
    }

    @Test func duplicateUpload() {
        // The same method, source and URL, however they are spelt; reported at the second.
        #expect(errors("""
            version: 1
            uploads:
              - from: build/app.tar
                to: https://h.example/u
              - from: ./build//app.tar
                to: "https://${HOST}/u"
                method: POST
              - from: /work/proj/build/app.tar
                to: https://h.example/u
                method: put
            """, environment: ["HOST": "h.example"]) == """
            syncr.yml:5:5: error: uploads[1]: same method, from and to as uploads[0] (line 3); remove one of them
              - from: ./build//app.tar
                ^
            """)
    }

    /// Two files put to one URL replace each other on every run: refused at the second, as are
    /// two archives of one name under one prefix. Two folders into one prefix, and two files
    /// posted to one endpoint, are fine.
    @Test func twoFilesPutToOneTargetAreRefused() {
        #expect(errors("""
            version: 1
            uploads:
              - { from: a, to: "https://h.example/dav/same.txt", method: put }
              - { from: b, to: "https://${HOST}/dav/same.txt", method: put }
            """, environment: ["HOST": "h.example"]).contains(
                "uploads[1]: same to as uploads[0] (line 3): each run would replace the other's file there"))
        #expect(errors("""
            version: 1
            uploads:
              - { from: a, to: "s3://bucket/same.bin" }
              - { from: b, to: "s3://bucket/same.bin" }
            """).contains("same to as uploads[0]"))
        #expect(errors("""
            version: 1
            uploads:
              - { from: site/, to: "s3://bucket/site/" }
              - { from: extra/, to: "s3://bucket/site/" }
              - { from: a, to: "https://h.example/upload" }
              - { from: b, to: "https://h.example/upload" }
              - { from: one/dist/, to: "s3://bucket/site/", zip: true }
              - { from: two/docs, to: "s3://bucket/site/", zip: true }
            """) == "OK")
        // Two folders of one name zipped under one prefix, or into one bucket (with or without
        // its slash), are two archives of one key; two of other names are not.
        #expect(errors("""
            version: 1
            uploads:
              - { from: one/dist/, to: "s3://bucket/builds/", zip: true }
              - { from: two/dist, to: "s3://bucket/builds/", zip: true }
              - { from: one/docs, to: "s3://bucket", zip: true }
              - { from: two/docs, to: "s3://bucket/", zip: true }
              - { from: site, to: "s3://bucket", zip: true }
            """) == """
            syncr.yml:4:5: error: uploads[1]: same object (s3://bucket/builds/dist.zip) as uploads[0] (line 3): each run would replace the other's file there, and neither would ever be up to date; give each its own to:
              - { from: two/dist, to: "s3://bucket/builds/", zip: true }
                ^
            syncr.yml:6:5: error: uploads[3]: same object (s3://bucket/docs.zip) as uploads[2] (line 5): each run would replace the other's file there, and neither would ever be up to date; give each its own to:
              - { from: two/docs, to: "s3://bucket/", zip: true }
                ^
            """)
    }

    @Test func everyUploadErrorAtOnce() {
        let rendered = errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: ../a
            uploads:
              - from: ""
                to: ftp://x
                method: delete
              - from: b
            """)
        #expect(rendered == """
            syncr.yml:4:9: error: downloads[0].to: "../a" is outside the manifest's folder; set allow_outside: true on this entry if that is intended
                to: ../a
                    ^
            syncr.yml:6:11: error: uploads[0].from: expected a file or folder path, found an empty string
              - from: ""
                      ^
            syncr.yml:7:9: error: uploads[0].to: expected an http(s) URL, found "ftp://x": its scheme is not http, https or s3 (the only ones syncr speaks)
                to: ftp://x
                    ^
            syncr.yml:8:13: error: uploads[0].method: expected post or put, found "delete"
                method: delete
                        ^
            syncr.yml:9:5: error: uploads[1]: missing required key 'to'
              - from: b
                ^
            """)
    }

    @Test func secretsNeverInDiagnostics() {
        // Every secret-bearing value sits in an entry with errors; none of them may be printed.
        let env = ["TOKEN": "tok-secret-1", "KEY": "key-secret-2", "FIELD": "field-secret-3",
                   "BAD": "bad\nsecret-4"]
        let rendered = errors("""
            version: 1
            uploads:
              - from: a
                to: "https://h.example/u?k=${KEY}"
                headers: { Authorization: "Bearer ${TOKEN}", X-Bad: "${BAD}" }
                fields: { f: "${FIELD}", g: "${BAD}" }
                method: patch
              - from: a
                to: "${KEY}"
                fields: { f: "${FIELD}" }
            """, environment: env)
        #expect(rendered.contains("uploads[0].headers.X-Bad"))
        #expect(rendered.contains("uploads[0].fields.g"))
        #expect(rendered.contains("uploads[1].to"))
        for secret in ["tok-secret-1", "key-secret-2", "field-secret-3", "secret-4"] {
            #expect(!rendered.contains(secret))
        }
    }
}
