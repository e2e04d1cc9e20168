#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrDigest
import SyncrHTTP
import SyncrLock
import SyncrManifest
import SyncrS3

/// What the cache keeps of a multipart upload in progress, so that a killed run's next run
/// resumes it: the upload's ID, the file as it was, and the parts the store confirmed.
struct MultipartRecord: Codable, Sendable {
    struct Part: Codable, Sendable, Equatable {
        var etag: String
        var size: Int64
        /// The part's SHA-256 (base64), as sent in `x-amz-checksum-sha256`: the completion
        /// repeats it.
        var sha256: String?
    }
    var uploadID: String
    var bucket: String
    var key: String
    var partSize: Int64
    var source: FileFingerprint
    /// Part number -> what the store answered.
    var parts: [Int: Part] = [:]
    /// The store, so that `syncr cache prune` can abort the upload without the manifest: its
    /// endpoint as resolved, and where the credentials are to be found (never the keys).
    var endpoint: String?
    var region: String?
    var pathStyle: Bool?
    var profile: String?
    var anonymous: Bool?
    /// How the upload's parts prove their bytes (`PartChecksum`): "SHA256" for an upload
    /// created with that checksum algorithm, "MD5" for one created without (a store that
    /// refused the algorithm); nil, as MD5, in the record of an earlier syncr, which always
    /// created them without.
    var checksum: String?
    /// The whole file's SHA-256 (hex) when the upload began, as its object's metadata says;
    /// nil in the record of an earlier syncr.
    var sha256: String? = nil

    /// Whether this upload goes on with `file` as it is now (`sha256`: its SHA-256, or empty
    /// when not known): the same file, or the same bytes in a file made again (an archive
    /// built anew from an unchanged folder, a file touched), whose metadata the upload carries.
    /// Where both SHA-256s are known they decide, even for a file that looks the same (a
    /// rewrite in place within one timestamp tick): the upload's metadata would lie otherwise.
    func continues(_ file: FileFingerprint, sha256: String) -> Bool {
        if let recorded = self.sha256, !sha256.isEmpty { return recorded == sha256 && source.size == file.size }
        return source == file
    }

    var partChecksum: PartChecksum { checksum == PartChecksum.sha256.rawValue ? .sha256 : .md5 }

    /// What names the upload, read from a record the full decoding refuses (a field damaged,
    /// or a version of syncr that wrote other fields): enough to abort it.
    struct Name: Decodable {
        var uploadID: String
        var bucket: String
        var key: String
    }
}

/// How the parts of one multipart upload prove their bytes to the store.
///
/// SHA-256 where the store takes it: with SHA instructions it hashes 2.4 times as fast as MD5
/// here (1.78 GB/s against 0.75), and the parts' SHA-256s are computed beside the whole file's
/// on the other core (`S3PartDigests`) at the same pace, so that they are all known when the
/// upload starts and no part is hashed while the store competes for the CPU. Content-MD5, which
/// every S3 clone checks, where the store refuses the checksum algorithm (R2 and B2 do).
enum PartChecksum: String, Sendable {
    case sha256 = "SHA256"
    case md5 = "MD5"
}

/// One multipart upload of one file to an object store: CreateMultipartUpload (or the one a
/// killed run left, checked with ListParts), its missing parts in parallel (one per connection
/// of the entry), each with its SHA-256 in `x-amz-checksum-sha256` (or its Content-MD5: see
/// `PartChecksum`), then CompleteMultipartUpload. A store that answers a part without echoing
/// its SHA-256 did not check it: the part's ETag, the MD5 of the bytes it holds, is checked
/// against the file instead.
///
/// Memory is bounded by the parts in flight: each part is read from the file as curl sends it,
/// and hashed before in 1 MiB reads.
struct S3MultipartUpload: Sendable {
    let upload: Upload
    let file: UploadTree.File
    let key: String
    /// The whole file's SHA-256, stored as object metadata.
    let sha256: String
    let cache: Cache
    let engine: any Transport
    let retrying: Retrying
    let progress: UploadProgress
    /// Part number -> SHA-256 (hex) of parts already hashed while planning (`S3PartDigests`).
    var knownSHA256s: [Int: String] = [:]


    /// S3 takes at most 10,000 parts.
    static let maxParts: Int64 = 10_000

    /// `preferred`, raised to a whole MiB so that `size` fits in 10,000 parts.
    static func partSize(size: Int64, preferred: Int64) -> Int64 {
        let least = (size + maxParts - 1) / maxParts
        guard least > preferred else { return preferred }
        return (least + (1 << 20) - 1) / (1 << 20) * (1 << 20)
    }

    var builder: RequestBuilder { RequestBuilder(upload: upload) }
    var object: S3Object { builder.s3! }
    var recordPath: String { recordPath(naming: key) }

    /// A multipart record of this entry, told apart by `name` (the object's key; the UploadId of
    /// one kept for prune). Named by the upload's key first, so that the cache's inventory counts
    /// it in the upload's entry, and pruning the entry aborts the upload.
    private func recordPath(naming name: String) -> String {
        Self.recordPath(in: cache, upload: upload, naming: name)
    }

    static func recordPath(in cache: Cache, upload: Upload, naming name: String) -> String {
        cache.directory + "/" + Cache.uploadKey(upload) + "." + Digest.hex(.md5, of: Array(name.utf8)).prefix(16) + ".multipart"
    }

    /// The bytes of `file` (SHA-256 `sha256`) an earlier run's multipart upload to `key`
    /// recorded as in the store, for the plan (apply asks the store with ListParts); 0 when no
    /// such upload would resume.
    static func recordedBytes(in cache: Cache, upload: Upload, key: String, file: UploadTree.File, sha256: String,
                              bucket: String) -> Int64 {
        guard let bytes = FS.readAll(recordPath(in: cache, upload: upload, naming: key), limit: Cache.listRecordLimit),
              let record = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)),
              record.continues(file.fingerprint, sha256: sha256), record.key == key, record.bucket == bucket,
              record.partSize == partSize(size: file.fingerprint.size, preferred: upload.partSize) else { return 0 }
        return record.parts.values.reduce(0) { $0 + $1.size }
    }

    /// Sends the file; returns the bytes sent in this run and how many parts an earlier run had
    /// sent already.
    func run() async throws -> (sent: Int64, kept: Int) {
        await abortAbandoned()
        let size = file.fingerprint.size
        let partSize = Self.partSize(size: size, preferred: upload.partSize)
        let count = Int((size + partSize - 1) / partSize)
        var record = try await resumable(partSize: partSize, count: count)
        var kept = record?.parts.count ?? 0
        if record == nil { record = try await begin(partSize: partSize) }
        var book: PartBook, sent: Int64
        do {
            (book, sent) = try await sendMissing(of: record!, partSize: partSize, count: count)
        } catch let failure as SyncError where record!.partChecksum == .sha256 && Self.refusesChecksums(failure) {
            // The store took the checksum algorithm but refuses the parts' header: this upload
            // can never be completed. A new one carries Content-MD5, as every later one to it.
            S3Stores.noteChecksumRefusal(store)
            await giveUp(record!.uploadID)
            record = try await begin(partSize: partSize)
            kept = 0
            (book, sent) = try await sendMissing(of: record!, partSize: partSize, count: count)
        }
        // Every part must be of the file that was hashed: one changed while its parts went up
        // would complete as a mix of two versions, under the first one's SHA-256. (A part only
        // sees a change made while it is read.)
        guard FS.fingerprint(file.path) == file.fingerprint else {
            await giveUp(record!.uploadID)
            throw SyncError.changedWhileSending(path: file.path)
        }
        try await complete(await book.record)
        FS.remove(recordPath)
        return (sent, kept)
    }

    /// Creates the upload and records it.
    func begin(partSize: Int64) async throws -> MultipartRecord {
        let endpoint = object.configuration.endpoint
        let (uploadID, checksum) = try await create()
        let record = MultipartRecord(uploadID: uploadID, bucket: object.location.bucket, key: key,
                                     partSize: partSize, source: file.fingerprint, endpoint: endpoint.url,
                                     region: endpoint.region, pathStyle: endpoint.pathStyle,
                                     profile: upload.settings.s3.profile, anonymous: object.configuration.credentials == nil,
                                     checksum: checksum.rawValue, sha256: sha256.isEmpty ? nil : sha256)
        try save(record)
        return record
    }

    /// The parts `record` lacks, in parallel: one per connection of the entry, each holding two
    /// read-ahead buffers at most. Returns the book of parts and the bytes sent.
    func sendMissing(of record: MultipartRecord, partSize: Int64, count: Int) async throws -> (PartBook, Int64) {
        let uploadID = record.uploadID, checksum = record.partChecksum
        let book = PartBook(record: record, save: { try self.save($0) })
        var next = (1...count).filter { record.parts[$0] == nil }.makeIterator()
        var sent: Int64 = 0
        try await withThrowingTaskGroup(of: Int64.self) { group in
            func add() {
                guard let number = next.next() else { return }
                group.addTask {
                    try await self.sendPart(number, partSize: partSize, uploadID: uploadID, checksum: checksum, book: book)
                }
            }
            for _ in 0..<max(1, upload.settings.connections) { add() }
            while let bytes = try await group.next() {
                sent += bytes
                add()
            }
        }
        return (book, sent)
    }

    /// Aborts an upload that will not be completed, and forgets its record; one the store will
    /// not abort is kept under a name of its own in the entry, for `syncr cache prune` to abort
    /// later: forgotten, nothing would, and the store would keep (and bill) its parts.
    func giveUp(_ uploadID: String) async {
        if await abort(uploadID) {
            FS.remove(recordPath)
        } else {
            _ = rename(recordPath, abandonedRecordPath(uploadID))
        }
    }

    /// The upload an earlier run left for this file, with the parts the store still holds that
    /// match the file; nil when there is none to go on with. A file whose bytes changed since
    /// that upload began has its upload aborted.
    func resumable(partSize: Int64, count: Int) async throws -> MultipartRecord? {
        guard let bytes = FS.readAll(recordPath, limit: Cache.listRecordLimit) else { return nil }
        guard var record = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)) else {
            // Replaced as it is, its upload would stay in the store (and be billed) for good.
            if let named = try? JSONDecoder().decode(MultipartRecord.Name.self, from: Data(bytes)),
               named.bucket == object.location.bucket, named.key == key {
                await giveUp(named.uploadID)
            }
            return nil
        }
        guard record.continues(file.fingerprint, sha256: sha256), record.partSize == partSize, record.key == key,
              record.bucket == object.location.bucket else {
            await giveUp(record.uploadID)
            return nil
        }
        guard let listed = try await listParts(record.uploadID) else {
            FS.remove(recordPath)
            return nil
        }
        var parts: [Int: MultipartRecord.Part] = [:]
        for (number, part) in listed where number <= count {
            let length = min(partSize, file.fingerprint.size - Int64(number - 1) * partSize)
            guard part.size == length else { continue }
            let offset = Int64(number - 1) * partSize
            let sha256 = record.partChecksum == .sha256 ? try await partSHA256(number, offset: offset, length: length) : nil
            if try await holdsThisFile(part, sha256: sha256, offset: offset, length: length) {
                parts[number] = .init(etag: part.etag, size: length, sha256: sha256.map(Uploader.base64(hex:)))
            }
        }
        record.parts = parts
        // The upload is this file's now (it may have gone on by its bytes, in a file made again).
        record.source = file.fingerprint
        try save(record)
        return record
    }

    /// Whether a part the store holds is these bytes of the file: by the SHA-256 it lists (S3
    /// does for an upload created with a checksum), else by its ETag, which is the MD5 of its
    /// bytes (SeaweedFS lists no checksum; nor does any store for an MD5 upload).
    func holdsThisFile(_ part: ListPartsPage.Part, sha256: String?, offset: Int64, length: Int64) async throws -> Bool {
        if let sha256, let listed = part.checksumSHA256 { return listed == Uploader.base64(hex: sha256) }
        return try await partMD5(offset: offset, length: length) == part.etag.lowercased()
    }

    /// Whether an ETag is an MD5 in hex, as S3 and its clones make a part's from its bytes
    /// (unless encrypted with KMS keys).
    static func isMD5(_ etag: String) -> Bool {
        etag.utf8.count == 32 && etag.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }
    }

    /// The MD5 (hex) of a part, read now.
    func partMD5(offset: Int64, length: Int64) async throws -> String {
        try await BlockingIO.run { [path = file.path] in try Self.digest(.md5, of: path, offset: offset, length: length) }
    }

    /// The SHA-256 (hex) of a part: hashed beside the file's SHA-256 while planning, else now.
    func partSHA256(_ number: Int, offset: Int64, length: Int64) async throws -> String {
        if let known = knownSHA256s[number] { return known }
        return try await BlockingIO.run { [path = file.path] in try Self.digest(.sha256, of: path, offset: offset, length: length) }
    }

    /// ListParts over every page; nil when the store no longer knows the upload.
    func listParts(_ uploadID: String) async throws -> [Int: ListPartsPage.Part]? {
        var all: [ListPartsPage.Part] = []
        var marker: String?
        repeat {
            let query = [("uploadId", uploadID)] + (marker.map { [("part-number-marker", $0)] } ?? [])
            let sink = BodyPrefixSink(limit: 4 << 20)
            let request = builder.finish(HTTPRequest(url: object.url(key: key, query: query), displayURL: display), lowSpeed: nil)
            guard let text = try await call(request, sink: sink, missingIsNil: true) else { return nil }
            guard let page = ListPartsPage(parsing: text) else {
                throw SyncError.other(message: "\(display): the store's list of parts could not be read")
            }
            all += page.parts
            marker = page.nextMarker
        } while marker != nil
        return ListPartsPage.newest(all)
    }

    var display: String { "s3://\(object.location.bucket)/\(key)" }

    /// The store, as the endpoint names it ("AWS" for AWS's own).
    var store: String { object.configuration.endpoint.url ?? "AWS" }

    /// Starts an upload whose parts carry SHA-256s; a store that refuses the checksum
    /// algorithm gets one whose parts carry Content-MD5.
    func create() async throws -> (uploadID: String, checksum: PartChecksum) {
        if S3Stores.refusedChecksums(store) { return (try await create(.md5), .md5) }
        do {
            return (try await create(.sha256), .sha256)
        } catch let failure as SyncError where Self.refusesChecksums(failure) {
            S3Stores.noteChecksumRefusal(store)
            return (try await create(.md5), .md5)
        }
    }

    /// A store's refusal of `x-amz-checksum-algorithm` or `x-amz-checksum-sha256` (R2 answers
    /// 501 Not Implemented, B2 400 "Unsupported header 'x-amz-checksum-algorithm'"), told from a
    /// refusal of the upload by the store's own words (not the whole message, which names the
    /// key), and from a checksum that did not match the bytes (which is no refusal of the header).
    static func refusesChecksums(_ failure: SyncError) -> Bool {
        let status: Int, code: String, said: String
        switch failure {
        case .objectStore(let value, _, _, _, let storeCode, let storeMessage, _, _, _):
            (status, code, said) = (value, storeCode ?? "", storeMessage)
        case .http(let value, _, let body, _, _, _):
            let error = S3ErrorResponse(parsing: body)
            (status, code, said) = (value, error?.code ?? "", error?.message ?? "")
        default:
            return false
        }
        guard !mismatchCodes.contains(code) else { return false }
        return status == 501 || (status == 400 && (code + " " + said).lowercased().contains("checksum"))
    }

    /// S3's codes for a body whose checksum did not match it.
    static let mismatchCodes: Set<String> = ["BadDigest", "InvalidDigest", "XAmzContentChecksumMismatch",
                                             "XAmzContentSHA256Mismatch"]

    func create(_ checksum: PartChecksum) async throws -> String {
        var headers = [(S3Metadata.sha256Header, sha256),
                       ("Content-Type", upload.contentType ?? ContentType.forFilename(file.relative))]
        if checksum == .sha256 { headers.append(("x-amz-checksum-algorithm", checksum.rawValue)) }
        var request = HTTPRequest(method: .post, url: object.url(key: key, query: [("uploads", "")]), displayURL: display,
                                  headers: headers)
        request = builder.finish(request, lowSpeed: nil)
        guard let text = try await call(request, sink: BodyPrefixSink(limit: 64 << 10)),
              let id = ListPartsPage.uploadID(text) else {
            throw SyncError.other(message: "\(display): the store did not start a multipart upload (no UploadId)")
        }
        return id
    }

    func sendPart(_ number: Int, partSize: Int64, uploadID: String, checksum: PartChecksum,
                  book: PartBook) async throws -> Int64 {
        let offset = Int64(number - 1) * partSize
        let length = min(partSize, file.fingerprint.size - offset)
        // The checksum header is the part's integrity check, which the store verifies; the
        // payload is not signed as well (UNSIGNED-PAYLOAD): the store would hash every byte a
        // second time, and the CPU is the limit on a small machine.
        var md5: String?, sha256: String?
        if checksum == .sha256 {
            sha256 = Uploader.base64(hex: try await partSHA256(number, offset: offset, length: length))
        } else {
            md5 = try await partMD5(offset: offset, length: length)
        }
        var request = HTTPRequest(method: .put,
                                  url: object.url(key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)]),
                                  displayURL: display,
                                  headers: sha256.map { [("x-amz-checksum-sha256", $0)] } ?? [("Content-MD5", Uploader.base64(hex: md5!))],
                                  body: .fileRange(path: file.path, offset: offset, length: length, since: file.fingerprint))
        request = builder.finish(request, lowSpeed: nil)
        let response = try await callResponse(request, sink: DiscardSink())
        let etag = try await checkedETag(response.head, part: number, offset: offset, length: length, sha256: sha256, md5: md5)
        try await book.finished(number, part: .init(etag: etag, size: length, sha256: sha256))
        progress.requestDone(length)
        return length
    }

    /// The ETag the completion names a sent part by. A SHA-256 the store did not echo was not
    /// checked (a store that ignores the header, an older Ceph): the part's ETag, where it is
    /// an MD5, must then be that of the file's bytes. A store that gives no ETag (a proxy that
    /// drops it) is completed with the part's MD5, which is what S3 and its clones give.
    func checkedETag(_ head: HTTPResponseHead, part number: Int, offset: Int64, length: Int64,
                     sha256: String?, md5: String?) async throws -> String {
        let etag = head.value("ETag").map(ListPartsPage.unquotedETag) ?? ""
        var md5 = md5
        if let sha256, head.value("x-amz-checksum-sha256") != sha256 {
            let held = try await partMD5(offset: offset, length: length)
            guard !Self.isMD5(etag) || etag.lowercased() == held else {
                throw SyncError.other(message: "\(display): the store holds other bytes for part \(number) than the file's "
                                      + "(its ETag \(etag) is not their MD5 \(held)); run again to send the part again")
            }
            md5 = held
        }
        if !etag.isEmpty { return etag }
        if let md5 { return md5 }
        return try await partMD5(offset: offset, length: length)
    }

    func complete(_ record: MultipartRecord) async throws {
        let xml = ListPartsPage.completion(record.parts.map { .init(number: $0.key, etag: $0.value.etag, sha256: $0.value.sha256) })
        let path = recordPath + ".complete"
        try FS.writeAtomically(Array(xml.utf8), to: path, durable: false)
        defer { FS.remove(path) }
        var request = HTTPRequest(method: .post, url: object.url(key: key, query: [("uploadId", record.uploadID)]),
                                  displayURL: display, headers: [("Content-Type", "application/xml")], body: .file(path: path))
        request = builder.finish(request, lowSpeed: nil)
        let sink = BodyPrefixSink(limit: 64 << 10)
        do {
            _ = try await call(request, sink: sink)
        } catch let failure as SyncError where failure.httpStatus == 404 {
            // NoSuchUpload: a completion whose answer was lost on the way is retried, and by
            // then the store has finished the upload and forgotten it. The object says whether.
            guard await objectIsThisFile() else { throw failure }
            return
        }
        // S3 may answer 200 and still fail the completion, in the body.
        if let error = S3ErrorResponse(parsing: sink.text) {
            throw SyncError.other(message: "\(display): completing the multipart upload failed: \(error.code): \(error.message)")
        }
    }

    /// Whether the object in the store is this file: its size, and the SHA-256 given when the
    /// upload was created.
    func objectIsThisFile() async -> Bool {
        let request = builder.head(url: object.url(key: key), displayURL: display)
        guard case .success(let response) = await engine.perform(S3Object.resigned(request, by: object), sink: DiscardSink()),
              response.head.isSuccess else { return false }
        return response.head.contentLength == file.fingerprint.size && response.head.value(S3Metadata.sha256Header) == sha256
    }

    /// Aborts an upload; true when the store confirmed it, or no longer knows the upload.
    func abort(_ uploadID: String) async -> Bool {
        let request = builder.finish(HTTPRequest(method: .delete, url: object.url(key: key, query: [("uploadId", uploadID)]),
                                                 displayURL: display), lowSpeed: nil)
        // Through the one retry loop, as any request of the upload (a 503 SlowDown at that
        // moment left the parts in the store, billed); the store's 404 means done.
        do {
            _ = try await call(request, sink: BodyPrefixSink(limit: 64 << 10), missingIsNil: true)
            return true
        } catch {
            return false
        }
    }

    /// Where the record of an upload that could not be aborted is kept, for prune to abort.
    func abandonedRecordPath(_ uploadID: String) -> String { recordPath(naming: uploadID) }

    /// Aborts the uploads of this object that an earlier run gave up on and could not abort (a
    /// store that failed the DELETE): their records were kept for that, but only `cache prune`
    /// of an entry gone from the manifest tried again, so while the entry stayed, the store
    /// kept (and billed) their parts. One listing of the cache per large file.
    func abortAbandoned() async {
        let prefix = Cache.uploadKey(upload) + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: cache.directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".multipart") {
            let path = cache.directory + "/" + name
            guard path != recordPath, let bytes = FS.readAll(path, limit: Cache.listRecordLimit),
                  let record = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)),
                  record.key == key, record.bucket == object.location.bucket else { continue }
            if await abort(record.uploadID) { FS.remove(path) }
        }
    }

    /// The body of a 2xx answer as text (nil for a 404 when `missingIsNil`).
    func call(_ request: HTTPRequest, sink: BodyPrefixSink, missingIsNil: Bool = false) async throws -> String? {
        do {
            _ = try await callResponse(request, sink: sink)
            return String(decoding: sink.bytes, as: UTF8.self)
        } catch let failure as SyncError where missingIsNil {
            if failure.httpStatus == 404 { return nil }
            throw failure
        }
    }

    func callResponse(_ request: HTTPRequest, sink: ResponseSink) async throws -> HTTPResponse {
        try await retrying.run {
            switch await engine.perform(S3Object.resigned(request, by: object), sink: sink) {
            case .failure(let error): return .failed(error, position: 0)
            case .success(let response):
                if let error = response.statusError(url: request.displayURL) { return .failed(error, position: 0) }
                return .done(response)
            }
        }
    }

    func save(_ record: MultipartRecord) throws {
        try cache.prepare()
        try FS.writeAtomically(Array(try JSONEncoder().encode(record)), to: recordPath, durable: cache.flushes)
    }

    /// The digest (hex) of `length` bytes of a file from `offset`, read in 1 MiB pieces, on the
    /// calling thread; stops with `ECANCELED` once `Cancellation.isRequested`.
    static func digest(_ algorithm: Digest.Algorithm, of path: String, offset: Int64, length: Int64) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        let digest = Digest(algorithm)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: Int64 = 0
        while done < length {
            if Cancellation.isRequested { throw FileError(path: path, operation: "read", errno: ECANCELED) }
            let want = Int(min(Int64(buffer.count), length - done))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FileError(path: path, operation: "read", errno: n < 0 ? errno : EIO) }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            done += Int64(n)
        }
        return digest.finalizeHex()
    }
}

/// The parts finished so far, written to the cache after each one.
actor PartBook {
    private(set) var record: MultipartRecord
    private let save: @Sendable (MultipartRecord) throws -> Void

    init(record: MultipartRecord, save: @escaping @Sendable (MultipartRecord) throws -> Void) {
        self.record = record
        self.save = save
    }

    func finished(_ number: Int, part: MultipartRecord.Part) throws {
        record.parts[number] = part
        try save(record)
    }
}
