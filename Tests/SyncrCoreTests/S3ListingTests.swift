import Foundation
import Testing
@testable import SyncrCore
import SyncrManifest
import SyncrS3

@Suite(.timeLimit(.minutes(10))) struct S3ListingTests {
    static func prefixDownload() -> Download {
        let url = "s3://bucket/data/"
        return Download(index: 2, location: SourceLocation(file: "syncr.yml", line: 1, column: 1),
                        url: Template(literal: url), to: "out/", destination: "/p/out", allowOutside: false,
                        checksums: [], settings: .builtIn)
    }

    @Test func objectsBecomeDownloadsInsideTheFolder() throws {
        let location = try S3Location(parsing: "s3://bucket/data/")
        let one = try S3Listing.entry(Self.prefixDownload(), key: "data/sub/a b.txt", under: location).get()
        #expect(one.url.expanded == "s3://bucket/data/sub/a b.txt")
        #expect(one.destination == "/p/out/sub/a b.txt")
        #expect(one.to == "out/sub/a b.txt")
        #expect(one.index == 2)
    }

    /// A store holds keys that a manifest's s3:// URL may not carry (`?`, `#`, a tab): listed,
    /// each is still its own object, its key encoded in the request's path.
    @Test(arguments: [("data/a#b.txt", "data/a%23b.txt"), ("data/c?d.txt", "data/c%3Fd.txt"),
                      ("data/e\tf.txt", "data/e%09f.txt")])
    func listedKeysAManifestCouldNotWriteAreFetched(key: String, path: String) throws {
        let one = try S3Listing.entry(Self.prefixDownload(), key: key, under: S3Location(parsing: "s3://bucket/data/")).get()
        var settings = one.settings
        settings.s3 = S3Settings(endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true, anonymous: true)
        let object = try #require(S3Object(url: one.url, settings: settings))
        #expect(object.location.key == key)
        #expect(object.url() == "http://127.0.0.1:9/bucket/" + path)
    }

    /// Keys whose rest would leave the folder are refused, naming the key.
    @Test(arguments: ["data/../escape", "data//abs", "data/./x", "data/a/..", "data/x\u{0}y"])
    func escapingKeysAreRefused(key: String) throws {
        let location = try S3Location(parsing: "s3://bucket/data/")
        switch S3Listing.entry(Self.prefixDownload(), key: key, under: location) {
        case .success(let d): Issue.record("accepted \(key) as \(d.destination)")
        case .failure(let failure): #expect(failure.description.contains("\"\(key)\""))
        }
    }

    /// A store holds the keys `a` and `a/b`; a file system cannot hold a file and a folder of
    /// one name. The file fails at the listing, naming both keys, and the other objects go on;
    /// nothing is fetched to find out.
    @Test func aKeyThatIsAlsoTheFolderOfOthersFailsItsObjectBeforeAnyDownload() async throws {
        var download = Self.prefixDownload()
        download.settings.s3 = S3Settings(endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true, anonymous: true)
        // In the store's order (by bytes): `a-b` comes between `a` and `a/...`.
        let keys = ["data/a", "data/a-b", "data/a/b/c", "data/z"]
        let listing = "<ListBucketResult><IsTruncated>false</IsTruncated>"
            + keys.map { "<Contents><Key>\($0)</Key><Size>1</Size></Contents>" }.joined() + "</ListBucketResult>"
        let store = ScriptedTransport { _, _ in .status(200, body: listing) }
        let entries = try await S3Listing.expand(download, engine: store, redactor: Redactor(secrets: [])).get()
        #expect(entries.count == 4)
        for (i, entry) in entries.enumerated() {
            switch entry {
            case .unlisted(let object, let failure):
                #expect(i == 0 && object.object == 0 && object.to == "out/a")
                #expect(failure.description == "s3://bucket/data/: the object \"data/a\" is also the folder of the object "
                    + "\"data/a/b/c\", so out/a cannot be both a file and a folder; rename one of them in the bucket, "
                    + "or name the objects one by one")
            case .download(let object): #expect(i > 0 && object.object == i, "\(object.to)")
            case .upload: Issue.record("an upload")
            }
        }
        #expect(store.requests.count == 1, "only the listing was asked for")
    }

    /// Every file that is also a folder is found, once each, by its bytes: two spellings of one
    /// accented name are two names on Linux.
    @Test func filesThatAreFoldersAreFoundWhateverTheOrder() {
        func found(_ paths: [String]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: S3Listing.filesThatAreFolders(paths).map { ($0.key.path, $0.value) })
        }
        #expect(found(["a/b", "a-b", "a"]) == ["a": "a/b"])
        #expect(found(["x/y/z", "x/y", "x"]).keys.sorted() == ["x", "x/y"])
        #expect(found(["a", "ab/c", "a-b", "a.b/c", "b/a"]).isEmpty)
        #expect(found(["caf\u{e9}", "caf\u{65}\u{301}/x"]).isEmpty)
        #expect(found(["caf\u{e9}", "caf\u{e9}/x"]) == ["caf\u{e9}": "caf\u{e9}/x"])
    }

    /// Two prefixes may list one object into two folders: each copy then gets its own cache
    /// entry, as two entries naming one URL do.
    @Test func anObjectListedTwiceIsMarkedShared() throws {
        let wide = Self.prefixDownload()
        var narrow = wide
        narrow.url = Template(literal: "s3://bucket/data/sub/")
        narrow.destination = "/p/narrow"
        let one = try S3Listing.entry(wide, key: "data/sub/a", under: S3Location(parsing: "s3://bucket/data/")).get()
        let two = try S3Listing.entry(narrow, key: "data/sub/a", under: S3Location(parsing: "s3://bucket/data/sub/")).get()
        let other = try S3Listing.entry(wide, key: "data/b", under: S3Location(parsing: "s3://bucket/data/")).get()
        var entries: [Session.Entry] = [.download(one), .download(other), .download(two)]
        Session.markSharedURLs(&entries)
        let marked = entries.compactMap { entry -> Download? in
            if case .download(let d) = entry { return d }
            return nil
        }
        #expect(marked.map(\.sharesURL) == [true, false, true])
        #expect(Cache.key(for: marked[0]) != Cache.key(for: marked[2]))
    }

    @Test func pagesAreRead() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix>\
            <IsTruncated>true</IsTruncated><NextContinuationToken>tok/+=</NextContinuationToken>\
            <Contents><Key>p/a &amp; b.txt</Key><Size>12</Size><ETag>"x"</ETag></Contents>\
            <Contents><Key>p/c</Key><Size>0</Size></Contents></ListBucketResult>
            """
        let page = try #require(ListObjectsPage(parsing: xml))
        #expect(page.objects == [.init(key: "p/a & b.txt", size: 12), .init(key: "p/c", size: 0)])
        #expect(page.continuationToken == "tok/+=")
        #expect(ListObjectsPage(parsing: xml.replacingOccurrences(of: "true", with: "false"))?.continuationToken == nil)
        #expect(ListObjectsPage(parsing: "<Error><Code>NoSuchBucket</Code></Error>") == nil)
    }

    /// Keys asked for URL-encoded (as the AWS SDKs do): `+` is a space, `%2B` a plus, and a
    /// control character that XML 1.0 cannot carry arrives intact. The continuation token is
    /// never encoded.
    @Test func urlEncodedKeysAreDecoded() throws {
        #expect(ListObjectsPage.query(prefix: "p/", continuationToken: nil).map(\.name) == ["encoding-type", "list-type", "prefix"])
        let xml = """
            <ListBucketResult><Name>b</Name><Prefix>p%2F</Prefix><EncodingType>url</EncodingType>            <IsTruncated>true</IsTruncated><NextContinuationToken>tok+%2B</NextContinuationToken>            <Contents><Key>p/a+b%2Bc%01%C3%BC.txt</Key><Size>3</Size></Contents></ListBucketResult>
            """
        let page = try #require(ListObjectsPage(parsing: xml))
        #expect(page.objects == [.init(key: "p/a b+c\u{01}ü.txt", size: 3)])
        #expect(page.continuationToken == "tok+%2B")
        #expect(ListObjectsPage(parsing: xml.replacingOccurrences(of: "%01", with: "%0")) == nil, "a broken escape")
    }
}

/// `syncr cache prune MANIFEST` keeps the records of the objects of an `s3://` prefix download
/// (their keys are known only by listing the bucket): pruning them would make the next run
/// download every object again.
@Suite(.timeLimit(.minutes(10))) struct S3PruneTests {
    static func entry(_ url: String) -> CacheEntry {
        CacheEntry(key: Cache.key(for: url), kind: .download, status: .complete, files: [], bytesOnDisk: 1, url: url,
                   source: nil, modified: 0)
    }

    @Test func objectsUnderAReferencedPrefixAreKept() throws {
        let manifest = try ManifestLoader.parse(text: """
            version: 1
            downloads:
              - { url: "s3://bucket/data/", to: out/ }
              - { url: "https://h/f", to: f }
            """, path: "syncr.yml", directory: "/p", environment: [:])
        let prune = CachePrune(referenced: CachePrune.keys(referencedBy: manifest), olderThan: nil)
        #expect(!prune.selects(Self.entry("s3://bucket/data/sub/a.txt"), now: 0))
        #expect(!prune.selects(Self.entry("https://h/f"), now: 0))
        #expect(prune.selects(Self.entry("s3://bucket/other/a.txt"), now: 0))
        #expect(prune.selects(Self.entry("s3://bucket/database"), now: 0))
    }
}
