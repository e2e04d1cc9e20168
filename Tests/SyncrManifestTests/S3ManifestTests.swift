import Testing
@testable import SyncrManifest

/// `s3://` URLs and the `s3:` block: what is read, and the exact errors for bad values.
@Suite(.timeLimit(.minutes(10))) struct S3ManifestTests {
    @Test func parsesBucketAndKey() throws {
        #expect(try S3Location(parsing: "s3://artifacts/builds/123/app.tar.gz") == S3Location(bucket: "artifacts", key: "builds/123/app.tar.gz"))
        #expect(try S3Location(parsing: "S3://data/images/val/").isPrefix)
        #expect(try S3Location(parsing: "s3://data").key == "")
    }

    @Test(arguments: [("s3://", S3URLError.noBucket), ("s3:///key", .noBucket), ("s3://a/k", .badBucket("a")),
                      ("s3://-bad-/k", .badBucket("-bad-")), ("s3://ok-bucket/k?x=1", .queryOrFragment),
                      ("https://ok-bucket/k", .notS3)])
    func refusesBadURLs(url: String, error: S3URLError) {
        #expect(throws: error) { try S3Location(parsing: url) }
    }

    /// The scheme is told on its bytes, in any case, and nothing shorter than `s3://` passes.
    @Test(arguments: [("s3://bucket/key", true), ("S3://bucket/", true), ("s3://", true), ("s3:/", false), ("s3", false),
                      ("", false), ("s4://b/k", false), ("s3:\\\\b", false), ("https://example.com/s3://", false),
                      ("ß3://b/k", false)])
    func tellsS3URLs(_ url: String, _ isS3: Bool) {
        #expect(S3Location.isS3URL(url) == isS3, "\(url)")
    }

    @Test func s3BlockMergesKeyByKey() throws {
        let m = try parse("""
            version: 1
            defaults:
              s3: {endpoint: "http://127.0.0.1:8333", region: eu-west-1, profile: ci}
            downloads:
              - url: s3://artifacts/builds/123/app.tar.gz
                to: build/app.tar.gz
                s3: {region: us-east-2, anonymous: true}
              - url: s3://datasets/images/val/
                to: data/val/
            uploads:
              - from: dist/app.tar.gz
                to: s3://artifacts/builds/124/app.tar.gz
                multipart_threshold: 8MiB
                part_size: 5MiB
            """)
        #expect(m.downloads[0].settings.s3 == S3Settings(endpoint: "http://127.0.0.1:8333", region: "us-east-2",
                                                         profile: "ci", anonymous: true))
        #expect(m.downloads[0].s3 == S3Location(bucket: "artifacts", key: "builds/123/app.tar.gz"))
        #expect(m.downloads[1].s3?.isPrefix == true)
        #expect(m.downloads[1].destination == "/work/proj/data/val")
        #expect(m.uploads[0].s3?.key == "builds/124/app.tar.gz")
        #expect(m.uploads[0].method == .put)
        #expect((m.uploads[0].multipartThreshold, m.uploads[0].partSize) == (8 << 20, 5 << 20))
    }

    /// `zip: true` (and `deterministic:` with it) sends a folder to an object as one archive;
    /// the keys of other methods stay refused.
    @Test func aFolderGoesToAnObjectZipped() throws {
        let m = try parse("""
            version: 1
            uploads:
              - {from: dist/site/, to: "s3://artifacts/site.zip", zip: true, deterministic: false}
              - {from: dist/docs/, to: "s3://artifacts/docs/", zip: true}
            """)
        #expect(m.uploads[0].zip && !m.uploads[0].deterministic)
        #expect(m.uploads[0].s3?.key == "site.zip")
        #expect(m.uploads[1].zip && m.uploads[1].deterministic && m.uploads[1].s3?.isPrefix == true)
        #expect(errors("""
            version: 1
            uploads:
              - {from: dist/site/, to: "s3://artifacts/site.zip", zip: true, retry: true}
            """) == """
            syncr.yml:3:66: error: uploads[0].retry: retry does not apply to an s3:// target (an object store takes PutObject or a multipart upload, never a form or another method); remove it
              - {from: dist/site/, to: "s3://artifacts/site.zip", zip: true, retry: true}
                                                                             ^
            """)
    }

    @Test func badS3Values() {
        #expect(errors("""
            version: 1
            defaults:
              s3:
                endpoint: ftp://x
                region: "eu west"
                path_style: maybe
                profil: ci
            """) == """
            syncr.yml:4:15: error: defaults.s3.endpoint: expected an http(s) URL like http://127.0.0.1:8333 (no user, query or fragment), found "ftp://x"
                endpoint: ftp://x
                          ^
            syncr.yml:5:13: error: defaults.s3.region: expected a region like eu-west-1, found "eu west"
                region: "eu west"
                        ^
            syncr.yml:6:17: error: defaults.s3.path_style: expected true or false, found "maybe"
                path_style: maybe
                            ^
            syncr.yml:7:5: error: defaults.s3.profil: unknown key 'profil'; did you mean 'profile'?
                profil: ci
                ^
            """)
    }

    /// A bucket that is not valid once `${...}` is expanded: the expanded value is not shown
    /// (it may be a secret), as for the URLs of other entries.
    @Test func anExpandedBadBucketIsNotQuoted() {
        let text = errors("""
            version: 1
            downloads:
              - {url: "s3://${BKT}/key", to: a}
            """, environment: ["BKT": "Secret_Bucket_Token!"])
        #expect(!text.contains("Secret_Bucket_Token"), "\(text)")
        #expect(text.contains("\"s3://${BKT}/key\" is not a valid s3:// URL once its ${...} references are expanded: "
                              + "the bucket name is not valid"), "\(text)")
    }

    @Test func badS3URLsAndCombinations() {
        #expect(errors("""
            version: 1
            downloads:
              - {url: "s3://x/k", to: a}
              - {url: "s3://bucket/dir/", to: b, unzip: true}
              - {url: "https://h/f", to: c, s3: {region: r}}
            uploads:
              - {from: f, to: "s3://bucket/k", method: post}
              - {from: f, to: "https://h/k", part_size: 8MiB}
              - {from: f, to: "s3://bucket/k2", part_size: 1MiB}
            """) == """
            syncr.yml:3:11: error: downloads[0].url: "s3://x/k" is not a valid s3:// URL: "x" is not a valid bucket name (3 to 63 letters, digits, '.', '-' or '_', starting and ending with a letter or digit)
              - {url: "s3://x/k", to: a}
                      ^
            syncr.yml:4:11: error: downloads[1].url: "s3://bucket/dir/" names every object under a prefix (it ends in '/'); unzip: true applies to one object: name the object, or remove it
              - {url: "s3://bucket/dir/", to: b, unzip: true}
                      ^
            syncr.yml:5:33: error: downloads[2].s3: s3 applies only to s3:// URLs; remove it, or write the URL as s3://bucket/key
              - {url: "https://h/f", to: c, s3: {region: r}}
                                            ^
            syncr.yml:7:36: error: uploads[0].method: method does not apply to an s3:// target (an object store takes PutObject or a multipart upload, never a form or another method); remove it
              - {from: f, to: "s3://bucket/k", method: post}
                                               ^
            syncr.yml:8:34: error: uploads[1].part_size: part_size applies only to an s3:// target; remove it
              - {from: f, to: "https://h/k", part_size: 8MiB}
                                             ^
            syncr.yml:9:48: error: uploads[2].part_size: expected a size from 5.0 MiB to 5.0 GiB, found "1MiB"
              - {from: f, to: "s3://bucket/k2", part_size: 1MiB}
                                                           ^
            """)
    }
}
