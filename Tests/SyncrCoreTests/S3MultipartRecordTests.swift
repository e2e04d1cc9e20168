import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// A multipart upload's record against a scripted store: the part size S3's limit of 10,000
/// parts forces, and what becomes of the upload an earlier run left for a file that has changed
/// since (aborted; kept for `syncr cache prune` when the store will not abort it).
@Suite(.timeLimit(.minutes(5))) struct S3MultipartRecordTests {
    @Test func partSizeIsRaisedToAWholeMiBToStayWithinTenThousandParts() {
        #expect(S3MultipartUpload.partSize(size: 1 << 30, preferred: 16 << 20) == 16 << 20)
        #expect(S3MultipartUpload.partSize(size: 10_000 * (16 << 20), preferred: 16 << 20) == 16 << 20)
        // One byte more needs more than 16 MiB a part: 17 MiB, a whole MiB.
        #expect(S3MultipartUpload.partSize(size: 10_000 * (16 << 20) + 1, preferred: 16 << 20) == 17 << 20)
        let huge: Int64 = 5 << 40  // 5 TiB, S3's largest object
        let size = S3MultipartUpload.partSize(size: huge, preferred: 16 << 20)
        #expect(size % (1 << 20) == 0 && (huge + size - 1) / size <= 10_000)
    }

    /// Parts go up in parallel, as many at a time as the entry has connections.
    @Test(arguments: [1, 2, 3])
    func partsGoUpOverTheEntrysConnections(connections: Int) async throws {
        let tmp = try TemporaryFolder()
        let inFlight = Locked((now: 0, most: 0))
        let store = ScriptedTransport { request, _ in
            guard request.method == .put else { return Self.reply(request, abortStatus: 204) }
            inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            try? await Task.sleep(for: .milliseconds(300))  // long enough for the others to start
            inFlight.withLock { $0.now -= 1 }
            return .status(200, ["ETag": "\"etag\""])
        }
        _ = try await Self.setUp(tmp, store: store, connections: connections).run()
        #expect(inFlight.withLock { $0.most } == connections, "3 parts over \(connections) connections")
    }

    /// The file is changed while its first part goes up (a build still writing it, say): the
    /// parts after it would be of the new version, the SHA-256 given at the upload's creation
    /// of the old one. The upload is aborted, never completed, and nothing of it is kept.
    @Test func aFileChangedWhileItsPartsGoUpIsAbortedNotCompleted() async throws {
        let tmp = try TemporaryFolder()
        let path = tmp.path + "/big.bin"
        let store = ScriptedTransport { request, _ in
            if request.method == .put, request.url.contains("partNumber=1") {
                // Another writer rewrites the end of the file, and its time moves on.
                let fd = open(path, O_WRONLY)
                _ = pwrite(fd, [UInt8](repeating: 7, count: 4096), 4096, off_t(11 << 20))
                var times = [timespec(tv_sec: time(nil) + 5, tv_nsec: 0), timespec(tv_sec: time(nil) + 5, tv_nsec: 0)]
                _ = futimens(fd, &times)
                close(fd)
            }
            return Self.reply(request, abortStatus: 204)
        }
        let (multipart, _) = try Self.upload(tmp, store: store, connections: 1)
        await #expect(throws: SyncError.changedWhileSending(path: path)) { try await multipart.run() }
        #expect(!store.requests.contains { $0.method == .post && $0.url.contains("uploadId=NEW") }, "never completed")
        #expect(store.requests.contains { $0.method == .delete && $0.url.contains("uploadId=NEW") }, "aborted")
        #expect(try Self.records(multipart).isEmpty)
    }

    /// The answer to CompleteMultipartUpload is lost (the connection closes), and the retry
    /// finds the upload gone (404 NoSuchUpload): the store completed it. The object it made has
    /// the file's size and SHA-256, so the upload succeeded, and its record goes.
    @Test(arguments: [true, false])
    func aCompletionWhoseAnswerWasLostIsCheckedAgainstTheObject(objectIsTheFile: Bool) async throws {
        let tmp = try TemporaryFolder()
        let size = Int64(12 << 20 + 5)
        let completions = Locked(0)
        let store = ScriptedTransport { request, _ in
            if request.method == .post, request.url.contains("uploadId=NEW") {
                let attempt = completions.withLock { $0 += 1; return $0 }
                return attempt == 1 ? Reply(status: 0, failure: .connection(url: request.url, code: 52, message: "Empty reply from server"))
                    : .status(404, body: "<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>")
            }
            if request.method == .head {
                return .status(200, ["Content-Length": "\(objectIsTheFile ? size : size - 1)",
                                     "x-amz-meta-syncr-sha256": "c0ffee"])
            }
            return Self.reply(request, abortStatus: 204)
        }
        let (plain, _) = try Self.upload(tmp, store: store)
        let retrying = Retrying(retries: 1, index: 0, kind: .upload, reporter: nil, redactor: Redactor(secrets: []))
        let multipart = S3MultipartUpload(upload: plain.upload, file: plain.file, key: "big.bin", sha256: "c0ffee",
                                          cache: plain.cache, engine: store, retrying: retrying, progress: UploadProgress())
        if objectIsTheFile {
            let (sent, _) = try await multipart.run()
            #expect(sent == size)
            #expect(try Self.records(multipart).isEmpty)
        } else {
            await #expect(throws: SyncError.self) { try await multipart.run() }
        }
        #expect(store.requests.filter { $0.method == .post && $0.url.contains("uploadId=NEW") }.count == 2)
    }

    /// The store: CreateMultipartUpload answers "NEW", parts and completion succeed, and the
    /// abort of the earlier upload "OLD" gets `abortStatus`.
    static func store(abortStatus: Int) -> ScriptedTransport {
        ScriptedTransport { request, _ in reply(request, abortStatus: abortStatus) }
    }

    static func reply(_ request: HTTPRequest, abortStatus: Int) -> Reply {
        switch request.method {
        case .delete: return .status(abortStatus, body: abortStatus == 500
            ? "<Error><Code>InternalError</Code><Message>try again</Message></Error>" : "")
        case .post where request.url.hasSuffix("?uploads="), .post where request.url.hasSuffix("?uploads"):
            return .status(200, body: "<InitiateMultipartUploadResult><UploadId>NEW</UploadId></InitiateMultipartUploadResult>")
        case .post:
            return .status(200, body: "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
        default:
            return .status(200, ["ETag": "\"etag\""])
        }
    }

    /// The upload of a 12 MiB + 5 byte file in 5 MiB parts to an anonymous store played by
    /// `store`, and the file's bytes. A store that refuses part checksums is remembered by its
    /// `endpoint` for the process: each such test needs one of its own.
    static func upload(_ tmp: TemporaryFolder, store: ScriptedTransport, connections: Int = 8,
                       endpoint: String = "http://127.0.0.1:9") throws -> (S3MultipartUpload, [UInt8]) {
        let (upload, tree, bytes) = try S3PartDigestsTests.setUp(tmp)
        var s3Upload = upload
        s3Upload.url = Template(literal: "s3://bucket/big.bin")  // a bucket name S3 accepts (3 characters at least)
        s3Upload.settings.s3 = S3Settings(endpoint: endpoint, region: "us-east-1", pathStyle: true, anonymous: true)
        s3Upload.settings.retries = 0
        s3Upload.settings.connections = connections
        let cache = Cache(directory: tmp.path + "/cache", flushes: false)
        let file = try #require(tree.files.first)
        let retrying = Retrying(retries: 0, index: 0, kind: .upload, reporter: nil, redactor: Redactor(secrets: []))
        let multipart = S3MultipartUpload(upload: s3Upload, file: file, key: "big.bin", sha256: "", cache: cache,
                                          engine: store, retrying: retrying, progress: UploadProgress())
        return (multipart, bytes)
    }

    /// The record an earlier run left of upload `uploadID` of the file as `source` describes it.
    /// `checksum` nil: an upload an earlier syncr created without a checksum algorithm.
    static func record(_ uploadID: String, source: FileFingerprint, parts: [Int: MultipartRecord.Part] = [:],
                       checksum: String? = PartChecksum.sha256.rawValue) -> MultipartRecord {
        MultipartRecord(uploadID: uploadID, bucket: "bucket", key: "big.bin", partSize: 5 << 20, source: source,
                        parts: parts, endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true,
                        profile: nil, anonymous: true, checksum: checksum)
    }

    /// `upload`, with a record of an earlier run's upload "OLD" of the file as it was before it
    /// changed.
    static func setUp(_ tmp: TemporaryFolder, store: ScriptedTransport, connections: Int = 8) throws -> S3MultipartUpload {
        let (multipart, _) = try upload(tmp, store: store, connections: connections)
        var changed = multipart.file.fingerprint
        changed.size -= 1
        try multipart.save(record("OLD", source: changed, parts: [1: .init(etag: "\"e1\"", size: 5 << 20)]))
        return multipart
    }

    static func records(_ multipart: S3MultipartUpload) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: multipart.cache.directory).filter { $0.hasSuffix(".multipart") }
    }

    /// An upload goes on with the file it began with, or with the same bytes in a file made
    /// again (an archive built anew, a file touched): same size and SHA-256 as recorded. Not
    /// with other bytes, even in a file that looks the same (rewritten within one timestamp
    /// tick); where either SHA-256 is unknown (an earlier syncr's record), the file decides.
    @Test func anUploadGoesOnWithTheSameFileOrTheSameBytes() {
        let began = FileFingerprint(device: 1, inode: 7, size: 12 << 20, mtimeNanoseconds: 1_000)
        let rebuilt = FileFingerprint(device: 1, inode: 8, size: 12 << 20, mtimeNanoseconds: 2_000)
        let sha = String(repeating: "ab", count: 32), other = String(repeating: "cd", count: 32)
        var record = Self.record("U", source: began)
        record.sha256 = sha
        #expect(record.continues(began, sha256: ""))
        #expect(record.continues(began, sha256: sha))
        #expect(!record.continues(began, sha256: other), "the upload's metadata would name other bytes")
        #expect(record.continues(rebuilt, sha256: sha))
        #expect(!record.continues(rebuilt, sha256: other))
        #expect(!record.continues(rebuilt, sha256: ""))
        var longer = rebuilt
        longer.size += 1
        #expect(!record.continues(longer, sha256: sha), "a size of its own says other bytes")
        record.sha256 = nil
        #expect(!record.continues(rebuilt, sha256: sha))
        #expect(record.continues(began, sha256: sha))
    }

    @Test func aChangedFilesEarlierUploadIsAbortedAndForgotten() async throws {
        let tmp = try TemporaryFolder()
        let store = Self.store(abortStatus: 204)
        let multipart = try Self.setUp(tmp, store: store)
        let (sent, kept) = try await multipart.run()
        #expect(sent == 12 << 20 + 5 && kept == 0)
        #expect(store.requests.contains { $0.method == .delete && $0.url.contains("uploadId=OLD") })
        #expect(!store.requests.contains { $0.url.contains("uploadId=OLD") && $0.method != .delete },
                "nothing of the old upload is listed or kept")
        #expect(try Self.records(multipart).isEmpty, "both uploads are done with: no record is left")
    }

    /// A store that will not abort the earlier upload (it answers 500): the new upload goes on,
    /// and the old one's record stays in the entry under a name of its own, for prune to abort.
    @Test func anEarlierUploadTheStoreWillNotAbortIsKeptForPrune() async throws {
        let tmp = try TemporaryFolder()
        let store = Self.store(abortStatus: 500)
        let multipart = try Self.setUp(tmp, store: store)
        let (sent, _) = try await multipart.run()
        #expect(sent == 12 << 20 + 5)
        let left = try Self.records(multipart)
        #expect(left == [(multipart.abandonedRecordPath("OLD") as NSString).lastPathComponent])
        let entry = Cache.uploadKey(multipart.upload)
        #expect(left.allSatisfy { $0.hasPrefix(entry + ".") }, "counted in the upload's entry, which prune aborts")
        let text = try String(contentsOfFile: multipart.abandonedRecordPath("OLD"), encoding: .utf8)
        let kept = try JSONDecoder().decode(MultipartRecord.self, from: Data(text.utf8))
        #expect(kept.uploadID == "OLD" && kept.bucket == "bucket" && kept.key == "big.bin")
    }
}

/// A killed upload resumed against a scripted store whose ListParts answer comes in two pages
/// and lists part 2 twice (as SeaweedFS does for a part sent again): the parts the store holds
/// with the file's MD5 are kept, the rest are sent, each with its x-amz-checksum-sha256.
@Suite(.timeLimit(.minutes(5))) struct S3MultipartResumeTests {
    static func part(_ number: Int, etag: String, at time: String, sha256: String? = nil) -> String {
        "<Part><PartNumber>\(number)</PartNumber><ETag>&quot;\(etag)&quot;</ETag><LastModified>\(time)</LastModified>"
            + (sha256.map { "<ChecksumSHA256>\(Uploader.base64(hex: $0))</ChecksumSHA256>" } ?? "")
            + "<Size>\(5 << 20)</Size></Part>"
    }

    /// Part number -> the SHA-256 (base64) each part `store` was sent had in its header.
    static func checksums(_ store: ScriptedTransport) -> [Int: String] {
        var parts: [Int: String] = [:]
        for put in store.requests where put.method == .put {
            guard let number = (1...3).first(where: { put.url.contains("partNumber=\($0)") }) else { continue }
            parts[number] = put.headers.first { $0.name == "x-amz-checksum-sha256" }?.value
        }
        return parts
    }

    /// The body of a CompleteMultipartUpload request, read as it is sent (the file goes after).
    static func completionBody(_ request: HTTPRequest) -> String? {
        guard case .file(let path)? = request.body else { return nil }
        return try? String(contentsOfFile: path, encoding: .utf8)
    }

    /// What the completion must say: every part with the SHA-256 of its bytes.
    static func expectedParts(_ bytes: [UInt8], etags: [Int: String]) -> String {
        let shas = S3PartDigestsTests.parts(bytes)
        return (1...3).map { "<Part><PartNumber>\($0)</PartNumber><ETag>\"\(etags[$0]!)\"</ETag>"
            + "<ChecksumSHA256>\(Uploader.base64(hex: shas[$0]!))</ChecksumSHA256></Part>" }.joined()
    }

    @Test func everyPageIsReadTheNewestCopyWinsAndOnlyMismatchesAreSentAgain() async throws {
        let tmp = try TemporaryFolder()
        let pages = Locked<[String]>([])  // written once the file's parts are known
        let completion = Locked<String?>(nil)
        let store = ScriptedTransport { request, _ in
            switch request.method {
            case .get:
                let page = request.url.contains("part-number-marker=1") ? 1 : 0
                return .status(200, body: pages.withLock { $0[page] })
            case .post:
                completion.withLock { $0 = Self.completionBody(request) }
                return .status(200, body: "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
            default: return .status(200, ["ETag": "\"etag\""])
            }
        }
        let (multipart, bytes) = try S3MultipartRecordTests.upload(tmp, store: store)
        let md5s = [S3PartDigestsTests.md5(bytes[0..<5 << 20]), S3PartDigestsTests.md5(bytes[5 << 20..<10 << 20]),
                    S3PartDigestsTests.md5(bytes[(10 << 20)...])]
        pages.withLock { $0 = [
            "<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>1</NextPartNumberMarker>"
                + Self.part(1, etag: md5s[0], at: "2026-12-01T10:00:00Z") + "</ListPartsResult>",
            // Part 2 twice: the older copy holds the file's bytes, the newer one does not; the
            // store keeps the newer, so part 2 must go again.
            "<ListPartsResult><IsTruncated>false</IsTruncated>"
                + Self.part(2, etag: md5s[1], at: "2026-12-01T10:00:01Z")
                + Self.part(2, etag: String(repeating: "0", count: 32), at: "2026-12-01T10:00:02Z") + "</ListPartsResult>",
        ] }
        try multipart.save(S3MultipartRecordTests.record("RUN", source: multipart.file.fingerprint))

        let (sent, kept) = try await multipart.run()
        #expect(kept == 1)
        #expect(sent == 12 << 20 + 5 - 5 << 20)
        #expect(store.requests.filter { $0.method == .get }.count == 2, "both pages of ListParts are read")
        #expect(!store.requests.contains { $0.method == .post && $0.url.contains("uploads") }, "no new upload")
        let shas = S3PartDigestsTests.parts(bytes)
        #expect(Self.checksums(store) == [2: Uploader.base64(hex: shas[2]!), 3: Uploader.base64(hex: shas[3]!)])
        // The kept part is completed with the ETag the store listed and its bytes' SHA-256.
        #expect(completion.withLock { $0 }?.contains(Self.expectedParts(bytes, etags: [1: md5s[0], 2: "etag", 3: "etag"])) == true,
                "\(completion.withLock { $0 } ?? "no completion")")
        #expect(try S3MultipartRecordTests.records(multipart).isEmpty)
    }

    /// A store that lists each part's SHA-256 (S3, for an upload created with that checksum) is
    /// believed over the ETags, which S3 does not make from the bytes everywhere (SSE-KMS): a
    /// part whose listed SHA-256 is the file's is kept whatever its ETag, one whose SHA-256 is
    /// not is sent again, and so is the part not listed.
    @Test func listedPartChecksumsDecideWhichPartsAreKept() async throws {
        let tmp = try TemporaryFolder()
        let page = Locked("")
        let store = ScriptedTransport { request, _ in
            switch request.method {
            case .get: return .status(200, body: page.withLock { $0 })
            case .post: return .status(200, body: "<CompleteMultipartUploadResult/>")
            default: return .status(200, ["ETag": "\"sent\""])
            }
        }
        let (multipart, bytes) = try S3MultipartRecordTests.upload(tmp, store: store)
        let shas = S3PartDigestsTests.parts(bytes)
        page.withLock { $0 = "<ListPartsResult><IsTruncated>false</IsTruncated>"
            + Self.part(1, etag: "kms-not-an-md5-1", at: "2026-12-01T10:00:00Z", sha256: shas[1]!)
            + Self.part(2, etag: S3PartDigestsTests.md5(bytes[5 << 20..<10 << 20]), at: "2026-12-01T10:00:01Z",
                        sha256: shas[3]!) + "</ListPartsResult>" }
        try multipart.save(S3MultipartRecordTests.record("RUN", source: multipart.file.fingerprint))

        let (_, kept) = try await multipart.run()
        #expect(kept == 1)
        #expect(Self.checksums(store).keys.sorted() == [2, 3], "part 2's listed SHA-256 is not its bytes' (its ETag is)")
    }

    /// An upload an earlier syncr created without a checksum algorithm (its parts carried
    /// Content-MD5) goes on as it began: the part the store holds with the file's MD5 is kept,
    /// the others are sent with their Content-MD5 (a SHA-256 would be refused), and the
    /// completion names no part checksum.
    @Test func anUploadCreatedWithoutAChecksumGoesOnWithContentMD5() async throws {
        let tmp = try TemporaryFolder()
        let completion = Locked<String?>(nil)
        let listed = Locked("")
        let store = ScriptedTransport { request, _ in
            if request.method == .get { return .status(200, body: listed.withLock { $0 }) }
            if request.method == .post, request.url.contains("uploadId=RUN") { completion.withLock { $0 = Self.completionBody(request) } }
            return S3MultipartRecordTests.reply(request, abortStatus: 204)
        }
        let (multipart, bytes) = try S3MultipartRecordTests.upload(tmp, store: store)
        let md5 = S3PartDigestsTests.md5(bytes[0..<5 << 20])
        listed.withLock { $0 = "<ListPartsResult><IsTruncated>false</IsTruncated>"
            + Self.part(1, etag: md5, at: "2026-12-01T10:00:00Z") + "</ListPartsResult>" }
        try multipart.save(S3MultipartRecordTests.record("RUN", source: multipart.file.fingerprint, checksum: nil))

        let (sent, kept) = try await multipart.run()
        #expect(kept == 1 && sent == 12 << 20 + 5 - 5 << 20)
        #expect(!store.requests.contains { $0.method == .post && $0.url.contains("uploads") }, "no new upload")
        let puts = store.requests.filter { $0.method == .put }
        #expect(puts.count == 2 && puts.allSatisfy { put in
            put.headers.contains { $0.name == "Content-MD5" } && !put.headers.contains { $0.name == "x-amz-checksum-sha256" }
        })
        let body = try #require(completion.withLock { $0 })
        #expect(body.contains("<ETag>\"\(md5)\"</ETag>") && !body.contains("ChecksumSHA256"), "\(body)")
    }

    /// A store that refuses the checksum algorithm (R2: 501; B2: 400 naming the header) gets an
    /// upload created without it, whose parts carry Content-MD5; a refusal for another reason
    /// is the upload's failure.
    @Test(arguments: [(501, "<Error><Code>NotImplemented</Code><Message>Header x-amz-checksum-algorithm is not implemented</Message></Error>", true),
                      (400, "<Error><Code>InvalidArgument</Code><Message>Unsupported header 'x-amz-checksum-algorithm' received for this API call.</Message></Error>", true),
                      (400, "<Error><Code>InvalidBucketName</Code><Message>The specified bucket is not valid.</Message></Error>", false)])
    func aStoreThatRefusesTheChecksumAlgorithmGetsContentMD5Parts(status: Int, body: String, fallsBack: Bool) async throws {
        let tmp = try TemporaryFolder()
        let store = ScriptedTransport { request, _ in
            if request.method == .post, request.url.contains("uploads"), request.headers.contains(where: { $0.name == "x-amz-checksum-algorithm" }) {
                return .status(status, body: body)
            }
            return S3MultipartRecordTests.reply(request, abortStatus: 204)
        }
        let (multipart, bytes) = try S3MultipartRecordTests.upload(tmp, store: store, endpoint: "http://127.0.0.1:\(10 + status + body.count)")
        guard fallsBack else {
            await #expect(throws: SyncError.self) { try await multipart.run() }
            #expect(store.requests.filter { $0.method == .post }.count == 1, "not asked again")
            return
        }
        let (sent, _) = try await multipart.run()
        #expect(sent == 12 << 20 + 5)
        let creates = store.requests.filter { $0.method == .post && $0.url.contains("uploads") }
        #expect(creates.count == 2 && !creates[1].headers.contains { $0.name == "x-amz-checksum-algorithm" })
        var md5s: [Int: String] = [:]
        for put in store.requests where put.method == .put {
            guard let number = (1...3).first(where: { put.url.contains("partNumber=\($0)") }) else { continue }
            md5s[number] = put.headers.first { $0.name == "Content-MD5" }?.value
        }
        let parts = [bytes[0..<5 << 20], bytes[5 << 20..<10 << 20], bytes[(10 << 20)...]]
        #expect(md5s == [1: Uploader.base64(hex: S3PartDigestsTests.md5(parts[0])), 2: Uploader.base64(hex: S3PartDigestsTests.md5(parts[1])),
                         3: Uploader.base64(hex: S3PartDigestsTests.md5(parts[2]))])
    }

    /// A store that takes the checksum algorithm but refuses the parts' header: that upload is
    /// aborted (it could never be completed) and a new one goes up with Content-MD5 parts; the
    /// next upload to that store starts with Content-MD5, without a refused request.
    @Test func aStoreThatRefusesPartChecksumsGetsANewUploadWithContentMD5() async throws {
        let tmp = try TemporaryFolder()
        let creates = Locked(0)
        let store = ScriptedTransport { request, _ in
            if request.method == .post, request.url.contains("uploads") {
                let n = creates.withLock { $0 += 1; return $0 }
                return .status(200, body: "<InitiateMultipartUploadResult><UploadId>U\(n)</UploadId></InitiateMultipartUploadResult>")
            }
            if request.method == .put, request.headers.contains(where: { $0.name == "x-amz-checksum-sha256" }) {
                return .status(400, body: "<Error><Code>InvalidArgument</Code><Message>x-amz-checksum-sha256 is not supported</Message></Error>")
            }
            return S3MultipartRecordTests.reply(request, abortStatus: 204)
        }
        let endpoint = "http://127.0.0.1:8"
        let (multipart, _) = try S3MultipartRecordTests.upload(tmp, store: store, endpoint: endpoint)
        let (sent, _) = try await multipart.run()
        #expect(sent == 12 << 20 + 5)
        #expect(store.requests.contains { $0.method == .delete && $0.url.contains("uploadId=U1") }, "the first upload is aborted")
        #expect(store.requests.contains { $0.method == .post && $0.url.contains("uploadId=U2") }, "the second is completed")
        let md5Parts = store.requests.filter { $0.method == .put && $0.headers.contains { $0.name == "Content-MD5" } }
        #expect(md5Parts.count == 3)

        let before = store.requests.count
        let other = try TemporaryFolder()
        let (again, _) = try S3MultipartRecordTests.upload(other, store: store, endpoint: endpoint)
        _ = try await again.run()
        let later = store.requests.dropFirst(before)
        #expect(!later.contains { $0.headers.contains { $0.name.hasPrefix("x-amz-checksum") } }, "Content-MD5 from the start")
    }

    /// A checksum that did not match its bytes (BadDigest) is no refusal of the header.
    @Test func aMismatchIsNoRefusal() {
        let mismatch = SyncError.http(status: 400, url: "s3://b/k", body: "<Error><Code>BadDigest</Code><Message>The SHA256 checksum "
                                      + "you specified did not match what we received.</Message></Error>", retries: .notRetried)
        #expect(!S3MultipartUpload.refusesChecksums(mismatch))
        let refusal = SyncError.http(status: 400, url: "s3://b/checksums/k", body: "<Error><Code>InvalidBucketName</Code>"
                                     + "<Message>no</Message></Error>", retries: .notRetried)
        #expect(!S3MultipartUpload.refusesChecksums(refusal), "the key's words are not the store's")
    }

    /// A store that answers a part without echoing its SHA-256 did not check it: the part's
    /// ETag, an MD5, must be that of the file's bytes, or the upload fails naming the part (and
    /// is left to resume, where the part is sent again). An ETag that is no MD5 is taken. A
    /// store that echoes the SHA-256 checked it: its ETag is not asked to be an MD5 (S3's are
    /// not, with SSE-KMS).
    @Test(arguments: [("right", true), ("wrong", false), ("opaque", true), ("echoed", true)])
    func aPartWhoseSHA256IsNotEchoedIsCheckedByItsETag(etag kind: String, succeeds: Bool) async throws {
        let tmp = try TemporaryFolder()
        let md5s = Locked<[Int: String]>([:])
        let store = ScriptedTransport { request, _ in
            guard request.method == .put, let number = (1...3).first(where: { request.url.contains("partNumber=\($0)") }) else {
                return S3MultipartRecordTests.reply(request, abortStatus: 204)
            }
            let right = md5s.withLock { $0[number]! }
            if kind == "echoed" {
                let sent = request.headers.first { $0.name == "x-amz-checksum-sha256" }?.value ?? ""
                return Reply(status: 200, headers: [("ETag", "\"\(String(repeating: "0", count: 32))\""),
                                                    ("X-Amz-Checksum-Sha256", sent)], body: [])
            }
            let etag = kind == "right" || number != 2 ? right : kind == "wrong" ? String(repeating: "0", count: 32) : "kms-\(number)"
            return .status(200, ["ETag": "\"\(etag)\""])
        }
        let (multipart, bytes) = try S3MultipartRecordTests.upload(tmp, store: store)
        md5s.withLock { $0 = [1: S3PartDigestsTests.md5(bytes[0..<5 << 20]), 2: S3PartDigestsTests.md5(bytes[5 << 20..<10 << 20]),
                              3: S3PartDigestsTests.md5(bytes[(10 << 20)...])] }
        if succeeds {
            _ = try await multipart.run()
        } else {
            await #expect(throws: SyncError.self) { try await multipart.run() }
            #expect(!store.requests.contains { $0.method == .post && $0.url.contains("uploadId=NEW") }, "never completed")
            #expect(try S3MultipartRecordTests.records(multipart).count == 1, "kept to resume")
        }
    }
}
