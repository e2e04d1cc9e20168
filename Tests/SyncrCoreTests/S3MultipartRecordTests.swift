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
    /// `store`, and the file's bytes.
    static func upload(_ tmp: TemporaryFolder, store: ScriptedTransport,
                       connections: Int = 8) throws -> (S3MultipartUpload, [UInt8]) {
        let (upload, tree, bytes) = try S3PartDigestsTests.setUp(tmp)
        var s3Upload = upload
        s3Upload.url = Template(literal: "s3://bucket/big.bin")  // a bucket name S3 accepts (3 characters at least)
        s3Upload.settings.s3 = S3Settings(endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true,
                                          anonymous: true)
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
    static func record(_ uploadID: String, source: FileFingerprint,
                       parts: [Int: MultipartRecord.Part] = [:]) -> MultipartRecord {
        MultipartRecord(uploadID: uploadID, bucket: "bucket", key: "big.bin", partSize: 5 << 20, source: source,
                        parts: parts, endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true,
                        profile: nil, anonymous: true)
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
/// with the file's MD5 are kept, the rest are sent, each with its Content-MD5.
@Suite(.timeLimit(.minutes(5))) struct S3MultipartResumeTests {
    static func part(_ number: Int, etag: String, at time: String) -> String {
        "<Part><PartNumber>\(number)</PartNumber><ETag>&quot;\(etag)&quot;</ETag><LastModified>\(time)</LastModified>"
            + "<Size>\(5 << 20)</Size></Part>"
    }

    @Test func everyPageIsReadTheNewestCopyWinsAndOnlyMismatchesAreSentAgain() async throws {
        let tmp = try TemporaryFolder()
        let pages = Locked<[String]>([])  // written once the file's parts are known
        let store = ScriptedTransport { request, _ in
            switch request.method {
            case .get:
                let page = request.url.contains("part-number-marker=1") ? 1 : 0
                return .status(200, body: pages.withLock { $0[page] })
            case .post:
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
        let puts = store.requests.filter { $0.method == .put }
        let numbers = puts.compactMap { put in (1...3).first { put.url.contains("partNumber=\($0)") } }
        #expect(numbers.sorted() == [2, 3])
        for (put, number) in zip(puts, numbers) {
            let sentMD5 = put.headers.first { $0.name == "Content-MD5" }?.value
            #expect(sentMD5 == Uploader.base64(hex: md5s[number - 1]), "part \(number)'s Content-MD5")
        }
        #expect(try S3MultipartRecordTests.records(multipart).isEmpty)
    }
}
