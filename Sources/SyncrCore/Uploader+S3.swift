import Foundation
import SyncrHTTP
import SyncrLock
import SyncrManifest
import SyncrS3

/// The object metadata syncr stores with every object it uploads: the SHA-256 of its bytes, so
/// that the next plan can tell from a HEAD whether the object is still what the file is.
enum S3Metadata {
    static let sha256Header = "x-amz-meta-syncr-sha256"
}

extension UploadPlanner {
    /// An upload to `s3://`: up to date when every object has the file's size and carries the
    /// file's SHA-256 as `x-amz-meta-syncr-sha256` (an object without it, or put there by
    /// another tool, is sent again). The record is not needed to decide, only to spare hashing.
    func planS3(_ upload: Upload, tree: UploadTree, item: PlanItem) async -> PlanItem {
        var item = item
        if let unresolved = unresolvedStore(upload, item: item) { return unresolved }
        let previous = cache.loadUploadRecord(Cache.uploadKey(upload))
        let files: [String: UploadRecord.SentFile]
        var parts = S3PartDigests()
        do {
            let hashing = { @Sendable in try Self.digests(tree, reusing: previous?.files) }
            if prefetchPartDigests {
                (files, parts) = try await S3PartDigests.beside(upload, tree: tree, hashing)
            } else {
                files = try await BlockingIO.run(hashing)
            }
        } catch is Interrupted {
            return item.failing(.interrupted(.beforeStart), redactor)
        } catch {
            item.action = .error
            item.reason = redactor.scrub("\(error)")
            return item
        }
        let record = UploadRecord(method: upload.method.rawValue, url: redactor.scrub(upload.url.written), from: upload.from, files: files)
        item.uploadContext = UploadContext(tree: tree, record: record, digestsPending: false, partDigests: parts)
        item.size = tree.totalSize
        item.bytes = tree.totalSize
        if force {
            item.reason = "--force"
            return item
        }
        // One HEAD per object, up to `jobs` at once: a folder of small files is bound by round trips.
        let planner = self
        // Once the store refused these credentials, the other objects are not asked: a folder
        // of 10,000 files sent two requests each before the first refusal was acted on.
        let refused = Locked(false)
        let differences = await Session.mapBounded(tree.files, width: jobs) { file in
            if refused.withLock({ $0 }) { return ObjectCheck(difference: "not asked") }
            let target = Uploader.target(upload, relative: file.relative, isDirectory: tree.isDirectory)
            let check = await planner.objectDifference(upload, target: target, file: files[file.relative])
            if check.failure != nil { refused.withLock { $0 = true } }
            return check
        }
        // The store refused the credentials (or the bucket is missing): an error of the plan,
        // as for a download, not an upload that apply would then fail.
        if let refused = differences.lazy.compactMap({ $0.failure }).first {
            return item.failing(refused, redactor)
        }
        let stale = differences.compactMap { $0.difference }
        guard stale.isEmpty else {
            // The objects the store holds as they are here are not sent again (a killed run's,
            // or all but the files that changed).
            let inStore = zip(tree.files, differences).filter { $0.1.difference == nil }.map(\.0)
            item.uploadContext?.inStore = Set(inStore.map(\.relative))
            let resumed = resumableBytes(upload, tree: tree, digests: files,
                                         stale: zip(tree.files, differences).filter { $0.1.difference != nil }.map(\.0))
            item.bytes = tree.totalSize - inStore.reduce(0) { $0 + $1.fingerprint.size } - resumed
            item.reason = redactor.scrub(stale.count == 1 ? stale[0] : "\(stale.count) objects differ (\(stale[0]), ...)")
                + (resumed > 0 ? "; a multipart upload resumes, \(ByteSize.format(resumed)) recorded as in the store" : "")
            return item
        }
        item.action = .skip
        item.bytes = 0
        item.reason = "unchanged: the object\(tree.files.count == 1 ? " has" : "s have") the same size and SHA-256"
        item.uploadContext?.finishedMultipart = finishedMultipart(upload, tree: tree)
        return item
    }

    /// The large files whose multipart record is still in the cache although their object is
    /// complete in the store: a run killed after CompleteMultipartUpload, before it removed the
    /// record. Apply forgets them (`Uploader.forgetFinishedMultipart`): left, `syncr cache`
    /// listed an unfinished upload for good. One `stat` per large file, or per file of one.
    func finishedMultipart(_ upload: Upload, tree: UploadTree) -> UploadTree {
        guard let s3 = RequestBuilder(upload: upload).s3 else { return UploadTree(isDirectory: false, files: []) }
        return UploadTree(isDirectory: tree.isDirectory, files: tree.files.filter { file in
            // A folder's small files are not looked for one by one (a `stat` each); a single
            // file's record is, whatever its size now (it may have shrunk, or the threshold
            // risen, since its upload was cut off).
            guard !tree.isDirectory || file.fingerprint.size >= upload.multipartThreshold else { return false }
            let display = Uploader.target(upload, relative: file.relative, isDirectory: tree.isDirectory).display
            let path = S3MultipartUpload.recordPath(in: cache, upload: upload, naming: s3.object(at: display).location.key)
            return FS.kind(path) == .file
        })
    }

    /// Bytes of the `stale` files that earlier runs' multipart uploads recorded as in the store
    /// (a killed run's): what apply will not send again, if the store still holds them.
    private func resumableBytes(_ upload: Upload, tree: UploadTree, digests: [String: UploadRecord.SentFile],
                                stale: [UploadTree.File]) -> Int64 {
        guard let s3 = RequestBuilder(upload: upload).s3 else { return 0 }
        return stale.filter { $0.fingerprint.size >= upload.multipartThreshold }.reduce(0) { total, file in
            let display = Uploader.target(upload, relative: file.relative, isDirectory: tree.isDirectory).display
            let object = s3.object(at: display)
            return total + S3MultipartUpload.recordedBytes(in: cache, upload: upload, key: object.location.key, file: file,
                                                           sha256: digests[file.relative]?.sha256 ?? "",
                                                           bucket: object.location.bucket)
        }
    }

    /// An upload to `s3://` whose store cannot be resolved (a profile that is not there, no
    /// credentials where they were asked for): its plan item, an error before any request.
    func unresolvedStore(_ upload: Upload, item: PlanItem) -> PlanItem? {
        guard upload.s3 != nil, let message = S3Stores.failure(url: upload.url, settings: upload.settings) else { return nil }
        var item = item
        item.action = .error
        item.reason = redactor.scrub(message)
        return item
    }

    /// `zip: true` to `s3://`: what the store holds at the archive's key, against the archive
    /// recorded as sent (`sent`, by name; none before a first upload): no difference when it
    /// is that archive (its size, and the SHA-256 stored with it).
    func archiveObject(_ upload: Upload, sent: [String: UploadRecord.SentFile]) async -> ObjectCheck {
        let name = upload.archiveName
        return await objectDifference(upload, target: Uploader.target(upload, relative: name, isDirectory: false),
                                      file: sent[name])
    }

    /// The archive an up-to-date `zip: true` entry sent, as its record has it (name and size),
    /// for the multipart record its upload may have left (`finishedMultipart`).
    func sentArchive(_ upload: Upload, files: [String: UploadRecord.SentFile]) -> UploadTree {
        let path = Uploader.archivePath(upload, in: cache)
        return UploadTree(isDirectory: false, files: files.map { name, sent in
            UploadTree.File(relative: name, path: path,
                            fingerprint: FileFingerprint(device: 0, inode: 0, size: sent.size, mtimeNanoseconds: 0))
        })
    }

    /// What the store's HEAD of one object said: it holds `file` (nil `difference`), holds
    /// another or none (`difference` says why), or refused (`failure`).
    struct ObjectCheck: Sendable {
        var difference: String?
        var failure: SyncError?
    }

    /// Whether the object at `target` is `file`. The store refusing the request itself (a
    /// wrong secret or key ID, an expired token, another region, a missing bucket: S3's code
    /// from a one-byte GET, since a HEAD answer has no body) is a failure: plan said "upload"
    /// and exited 0 on wrong credentials. Anything else that is not an answer about the object
    /// is a difference, so that apply sends it, retrying as for any request: a plain
    /// AccessDenied (credentials that may write but not read, a common least-privilege role),
    /// a busy store, a connection lost.
    private func objectDifference(_ upload: Upload, target: (url: String, display: String),
                                  file: UploadRecord.SentFile?) async -> ObjectCheck {
        let builder = RequestBuilder(upload: upload)
        let request = builder.head(url: target.url, displayURL: target.display)
        switch await engine.perform(request, sink: DiscardSink()) {
        case .success(let response) where response.head.status == 404:
            return ObjectCheck(difference: "\(target.display) is not in the store")
        case .success(let response) where response.head.isSuccess:
            guard let file else { return ObjectCheck(difference: "\(target.display) is in the store, but no upload of it is recorded") }
            if let length = response.head.contentLength, length != file.size {
                return ObjectCheck(difference: "\(target.display) is \(length) bytes in the store, \(file.size) here")
            }
            guard let stored = response.head.value(S3Metadata.sha256Header), stored == file.sha256 else {
                return ObjectCheck(difference: "\(target.display) has another SHA-256, or none recorded by syncr")
            }
            return ObjectCheck()
        case .success(let response):
            let status = response.head.status
            let unknown = ObjectCheck(difference: "\(target.display): the store answered HTTP \(status) to HEAD, so syncr cannot "
                + "tell whether it holds this file")
            guard (400..<500).contains(status), status != 408, status != 429,
                  case .success(let asked) = await engine.perform(builder.firstByte(url: target.url, displayURL: target.display),
                                                                  sink: DiscardSink()),
                  let error = asked.statusError(url: target.display), case .status(_, _, _, let body, _, _) = error,
                  let code = S3ErrorResponse(parsing: body)?.code, Self.refusals.contains(code) else { return unknown }
            return ObjectCheck(failure: SyncError(error, retries: .notRetried, s3: builder.s3?.object(at: target.display)))
        case .failure(let error):
            return ObjectCheck(difference: "\(target.display): \(error.description)")
        }
    }

    /// S3's codes that say no request of these credentials to this store can succeed, a PUT
    /// neither: a plan that went on would only fail in apply.
    static let refusals: Set<String> = ["InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                                        "TokenRefreshRequired", "AuthorizationHeaderMalformed", "PermanentRedirect",
                                        "NoSuchBucket", "InvalidBucketName", "AccountProblem"]
}

extension Uploader {
    /// The PutObject of one file: its SHA-256 signed as the payload hash (the store checks the
    /// body against it), its MD5 as `Content-MD5` (checked too, by stores that do not check the
    /// payload hash), and the SHA-256 stored as object metadata for the next plan.
    func s3Put(_ file: UploadTree.File, target: (url: String, display: String)) async throws -> HTTPRequest {
        let path = file.path
        let digests: [String: String]
        do {
            digests = try await BlockingIO.run { try FS.digests(of: path, algorithms: ["md5", "sha256"]) }
        } catch let error as Interrupted {
            throw error
        } catch {
            throw SyncError.other(message: "\(error)")
        }
        let sha256 = digests["sha256"] ?? "", md5 = digests["md5"] ?? ""
        let headers = [("X-Amz-Content-SHA256", sha256), ("Content-MD5", Self.base64(hex: md5)),
                       (S3Metadata.sha256Header, sha256)]
        return RequestBuilder(upload: upload).upload(.file(path: path), url: target.url, displayURL: target.display,
                                                     contentType: upload.contentType ?? ContentType.forFilename(file.relative),
                                                     extraHeaders: headers)
    }

    /// A file at or above `multipart_threshold`: a multipart upload, resumed when an earlier run
    /// left one. Notes how many parts an earlier run had sent.
    func multipart(_ file: UploadTree.File, target: (url: String, display: String), sha256: String,
                   knownSHA256s: [Int: String], notes: inout [EntryNote]) async throws -> Int64 {
        var multipart = multipartUpload(file, target: target, sha256: sha256, quiet: false)
        multipart.knownSHA256s = knownSHA256s
        let (sent, kept) = try await multipart.run()
        if kept > 0 { notes.append(.multipartResumed(target: target.display, parts: kept)) }
        return sent
    }

    /// The multipart upload of `file` to `target`, through the entry's retry loop; `quiet` for
    /// the cleanup of an up-to-date entry, whose retries are not reported. An s3:// target
    /// always has its store here: an entry whose store cannot be resolved fails before any
    /// request (`S3Stores.failure`), and `S3MultipartUpload` relies on it too.
    private func multipartUpload(_ file: UploadTree.File, target: (url: String, display: String), sha256: String,
                                 quiet: Bool) -> S3MultipartUpload {
        let object = requests.s3!.object(at: target.display)
        var retrying = Retrying(retries: upload.settings.retries, index: item.index, kind: .upload,
                                reporter: quiet ? nil : reporter, redactor: redactor)
        retrying.s3 = object
        if !quiet { retrying.unreachable = unreachable.map { ($0, target.url, target.display) } }
        return S3MultipartUpload(upload: upload, file: file, key: object.location.key, sha256: sha256, cache: cache,
                                 engine: engine, retrying: retrying, progress: uploadProgress)
    }

    /// Aborts and forgets the multipart uploads the plan found left behind by a run killed as
    /// it finished them (`UploadPlanner.finishedMultipart`). The store no longer knows such an
    /// upload (its abort answers 404); one it still knows (a run killed as it sent the parts of
    /// the object already in the store, with `--force`) would never be finished, so it is
    /// aborted too. A record whose abort fails stays where it is, for the next run to try again.
    func forgetFinishedMultipart() async {
        guard let finished = item.uploadContext?.finishedMultipart else { return }
        for file in finished.files {
            if Task.isCancelled { return }
            await forgetMultipart(file, target: Self.target(upload, file: file, tree: finished))
        }
    }

    /// Aborts and forgets the multipart upload to `target` an earlier run left, if the cache
    /// records one: after `file` went up in one PutObject (it shrank below the threshold, or
    /// the threshold rose, since that run was cut off), or once the entry is up to date
    /// (`forgetFinishedMultipart`). Left, the store kept its parts, billed, until `cache prune`.
    /// One failed `open` when there is none.
    func forgetMultipart(_ file: UploadTree.File, target: (url: String, display: String)) async {
        guard let s3 = requests.s3 else { return }
        let key = s3.object(at: target.display).location.key
        let path = S3MultipartUpload.recordPath(in: cache, upload: upload, naming: key)
        guard let bytes = FS.readAll(path, limit: Cache.listRecordLimit) else { return }
        guard let record = try? JSONDecoder().decode(MultipartRecord.Name.self, from: Data(bytes)) else {
            FS.remove(path)
            return
        }
        // Another object's upload (named by a hash of its key) is not this entry's to end.
        guard record.key == key, record.bucket == s3.location.bucket else { return }
        let multipart = multipartUpload(file, target: target, sha256: "", quiet: true)
        if await multipart.abort(record.uploadID) { FS.remove(path) }
    }

    /// Base64 of the bytes a hex string spells.
    static func base64(hex: String) -> String {
        var bytes: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8 = c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : (c | 0x20) - UInt8(ascii: "a") + 10
            if let h = high { bytes.append(h << 4 | v); high = nil } else { high = v }
        }
        return Data(bytes).base64EncodedString()
    }

    /// Where one file of an `s3://` upload goes: the key itself for a file, or the prefix joined
    /// with the file's path for a folder, and for a file sent to a prefix (`s3://b/reports/`,
    /// or the bucket itself) as `aws s3 cp` does. The prefix itself as a key was a folder
    /// marker (0 bytes on some stores), and the bucket's was a CreateBucket request.
    static func s3Target(_ upload: Upload, relative: String, isDirectory: Bool) -> (url: String, display: String)? {
        guard let object = S3Object(url: upload.url, settings: upload.settings) else { return nil }
        let base = object.location.key
        let toPrefix = base.isEmpty || base.hasSuffix("/")
        let key = !isDirectory && !toPrefix ? base : toPrefix ? base + relative : base + "/" + relative
        return (object.url(key: key), "s3://\(object.location.bucket)/\(key)")
    }
}
