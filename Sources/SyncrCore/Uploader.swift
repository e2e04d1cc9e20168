#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrDigest
import SyncrHTTP
import SyncrLock
import SyncrManifest
import Synchronization

/// What an upload will send, worked out while planning and carried to apply.
struct UploadContext: Sendable {
    var tree: UploadTree
    /// The record to save once the upload succeeded (sizes and SHA-256 of what is sent).
    var record: UploadRecord
    /// The digests are not known yet (nothing was ever sent): they are computed while sending.
    var digestsPending: Bool
    /// `zip: true`: `tree` is the folder, zipped into the cache by apply (plan never writes);
    /// what is sent is the archive.
    var zipFolder = false
    /// `s3://`: the SHA-256s of parts computed while the files were hashed.
    var partDigests = S3PartDigests()
    /// `s3://`: the files (relative paths) whose objects the plan found in the store with their
    /// size and SHA-256; they are not sent again.
    var inStore: Set<String> = []
    /// `s3://`, an entry up to date: the files (for `zip: true`, the archive last sent) whose
    /// multipart record outlived their completed upload, which apply forgets.
    var finishedMultipart = UploadTree(isDirectory: false, files: [])
}

extension Cache {
    /// The record key of an upload: method, source and target together, since several entries
    /// may send to one URL and one file may go to several.
    static func uploadKey(_ upload: Upload) -> String {
        Digest.hex(.md5, of: Array("upload\n\(upload.method.rawValue)\n\(upload.source)\n\(upload.url.expanded)".utf8))
    }

    func uploadRecordPath(_ key: String) -> String { directory + "/" + key + ".upload" }

    /// Upload and multipart records hold a line per file or part (about 200 bytes each): a
    /// folder of 5,000 files passes the 1 MiB that bounds a download's record, and a record
    /// cut off there read as none, so the folder was sent again whole on every run.
    static let listRecordLimit = 256 << 20

    func loadUploadRecord(_ key: String) -> UploadRecord? {
        guard let bytes = FS.readAll(uploadRecordPath(key), limit: Self.listRecordLimit), !bytes.isEmpty else { return nil }
        return try? JSONDecoder().decode(UploadRecord.self, from: Data(bytes))
    }

    func saveUploadRecord(_ record: UploadRecord, key: String) throws(FileError) {
        var r = record
        r.uploaded = Int64(time(nil))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(r) else {
            throw FileError(path: uploadRecordPath(key), operation: "encode the upload record", errno: EINVAL)
        }
        try FS.writeAtomically(Array(data), to: uploadRecordPath(key), durable: flushes)
    }
}

/// Plans uploads: what would be sent, and whether it already was.
struct UploadPlanner: Sendable {
    let cache: Cache
    let engine: any Transport
    let redactor: Redactor
    let force: Bool
    /// Files asked about at once (the run's `jobs`).
    let jobs: Int
    /// Planning for apply: the parts of a multipart upload have their SHA-256s computed beside
    /// the file's (a plan alone does not need them).
    var prefetchPartDigests = false

    func plan(_ upload: Upload) async -> PlanItem {
        var item = await planSource(upload)
        // Links the upload will not send are said before it runs.
        if !upload.zip, item.action != .error, let links = item.uploadContext?.tree.linksNotSent, !links.isEmpty {
            item.reason += "; " + EntryNote.linksNotSent(links).scrubbed(redactor).description
        }
        return item
    }

    private func planSource(_ upload: Upload) async -> PlanItem {
        var item = PlanItem(kind: .upload, index: upload.index, url: redactor.scrub(upload.url.written),
                            to: "", action: .upload, size: nil, offset: 0, bytes: nil, reason: "")
        item.from = upload.from
        func fail(_ error: SyncError) -> PlanItem { item.failing(error, redactor) }
        var scanned: UploadTree
        do {
            scanned = try await UploadTree.read(upload.source, excluding: cache.notUploaded)
        } catch let error as UploadTree.Problem {
            // The path as the manifest writes it, for a file inside the folder too.
            let from = upload.from.hasSuffix("/") ? String(upload.from.dropLast()) : upload.from
            let path = error.path == upload.source ? upload.from : error.path.replacingOccurrences(of: upload.source, with: from)
            return fail(.uploadSource(path: path, problem: error.problem))
        } catch {
            return fail(SyncError(error))
        }
        if scanned.isDirectory && scanned.files.isEmpty && !upload.zip {
            return fail(.uploadSource(path: upload.from, problem: .emptyFolder))
        }
        if upload.zip {
            guard scanned.isDirectory else { return fail(.uploadSource(path: upload.from, problem: .zipNeedsFolder)) }
            return await planZip(upload, folder: scanned, item: item)
        }
        if upload.s3 != nil { return await planS3(upload, tree: scanned, item: item) }
        let key = Cache.uploadKey(upload)
        let previous = cache.loadUploadRecord(key)
        let tree = scanned
        var files: [String: UploadRecord.SentFile] = [:]
        // With nothing sent before there is nothing to compare: the digests for the record are
        // computed while the upload runs, on the other core, rather than in a pass of their own.
        if previous != nil {
            do {
                files = try await BlockingIO.run { try Self.digests(tree, reusing: previous?.files) }
            } catch {
                return fail(SyncError(error))
            }
        }
        let record = UploadRecord(method: upload.method.rawValue, url: redactor.scrub(upload.url.written), from: upload.from, files: files)
        item.uploadContext = UploadContext(tree: tree, record: record, digestsPending: previous == nil)
        let size = tree.totalSize
        item.size = size
        item.bytes = size
        if force {
            item.reason = "--force"
            return item
        }
        guard let previous else {
            item.reason = "not uploaded before"
            return item
        }
        let changes = SourceChanges(files, before: previous.files) { $0.sha256 != $1.sha256 }
        if !changes.isEmpty {
            item.reason = tree.isDirectory ? changes.reason : "changed since the last upload"
            return item
        }
        if upload.method == .put, let missing = await remoteDifference(upload, tree: tree) {
            item.reason = redactor.scrub(missing)
            return item
        }
        item.action = .skip
        item.bytes = 0
        item.reason = "unchanged since the last upload (\(ByteSize.format(size)), same SHA-256)"
        return item
    }

    /// A folder sent as one archive (`zip: true`), decided from the folder's files alone: plan
    /// never builds the archive (it writes nothing). The folder is unchanged when every file has
    /// the name and SHA-256 it had when it was last zipped (and, for an archive that is not
    /// deterministic, the same modification time, which the archive carries), and what else the
    /// archive holds (folders, links, permissions: `ZipWriter.shape`) is as it was; files whose
    /// size, time and inode are as recorded are not hashed again.
    private func planZip(_ upload: Upload, folder: UploadTree, item: PlanItem) async -> PlanItem {
        var item = item
        if let unresolved = unresolvedStore(upload, item: item) { return unresolved }
        let previous = cache.loadUploadRecord(Cache.uploadKey(upload))
        // To s3://, the object is asked about before the folder is judged: a store refusing
        // these credentials fails the plan whatever the folder says, as for a file.
        let stored = upload.s3 == nil || force ? ObjectCheck() : await archiveObject(upload, sent: previous?.files ?? [:])
        if let refused = stored.failure { return item.failing(refused, redactor) }
        var record = UploadRecord(method: upload.method.rawValue, url: redactor.scrub(upload.url.written),
                                  from: upload.from, files: [:])
        let source = upload.source, excluded = cache.notUploaded
        do {
            record.sourceShape = try await BlockingIO.run {
                Digest.hex(.md5, of: try ZipWriter.shape(of: source, excluding: excluded))
            }
        } catch {
            return item.failing(SyncError(error), redactor)
        }
        var context = UploadContext(tree: folder, record: record, digestsPending: true, zipFolder: true)
        // The archive's size is known once apply has built it.
        item.size = nil
        item.bytes = nil
        guard !force, let previous, let before = previous.sources else {
            item.uploadContext = context
            item.reason = force ? "--force" : "not uploaded before"
            return item
        }
        let sources: [String: UploadRecord.SentFile]
        do {
            sources = try await BlockingIO.run { try Self.digests(folder, reusing: before) }
        } catch {
            return item.failing(SyncError(error), redactor)
        }
        context.record.sources = sources
        item.uploadContext = context
        let changes = Self.changedSources(sources, before: before, timesMatter: !upload.deterministic)
        if !changes.isEmpty {
            item.reason = changes.reason
            return item
        }
        // A record from before the shape was kept says nothing about it: what was sent may
        // differ in folders, links or permissions, so it is sent once more, and recorded.
        guard let shape = previous.sourceShape else {
            item.reason = "the last upload's record does not say which folders, links and permissions it held (written by an older syncr)"
            return item
        }
        if shape != record.sourceShape {
            item.reason = "folders, links or permissions changed since the last upload"
            return item
        }
        if upload.s3 != nil {
            if let difference = stored.difference {
                item.reason = redactor.scrub(difference)
                return item
            }
            item.uploadContext?.finishedMultipart = finishedMultipart(upload, tree: sentArchive(upload, files: previous.files))
        } else if upload.method == .put,
                  let missing = await remoteDifference(upload, files: previous.files.map { ($0.key, $0.value.size) },
                                                       isDirectory: false) {
            item.reason = redactor.scrub(missing)
            return item
        }
        let size = previous.totalSize
        item.action = .skip
        item.size = size
        item.bytes = 0
        item.reason = "unchanged since the last upload (\(folder.files.count) files zipped to \(ByteSize.format(size)), same SHA-256)"
        return item
    }

    /// Files added, removed or changed in content (or, where `timesMatter`, in modification time).
    static func changedSources(_ now: [String: UploadRecord.SentFile], before: [String: UploadRecord.SentFile],
                               timesMatter: Bool) -> SourceChanges {
        SourceChanges(now, before: before) { old, file in
            old.sha256 != file.sha256 || (timesMatter && old.fingerprint.mtimeNanoseconds != file.fingerprint.mtimeNanoseconds)
        }
    }

    /// For PUT targets: asks the server whether what was sent is still there, at the same size.
    /// Returns why it must be sent again, or nil.
    private func remoteDifference(_ upload: Upload, tree: UploadTree) async -> String? {
        await remoteDifference(upload, files: tree.files.map { ($0.relative, $0.fingerprint.size) },
                               isDirectory: tree.isDirectory)
    }

    /// The same for files by relative path and size.
    private func remoteDifference(_ upload: Upload, files: [(relative: String, size: Int64)],
                                  isDirectory: Bool) async -> String? {
        let engine = engine
        let differences = await Session.mapBounded(files.map { Pair(relative: $0.relative, size: $0.size) },
                                                   width: jobs) { file -> String? in
            let target = Uploader.target(upload, relative: file.relative, isDirectory: isDirectory)
            let request = RequestBuilder(upload: upload).head(url: target.url, displayURL: target.display)
            switch await engine.perform(request, sink: DiscardSink()) {
            case .success(let response) where response.head.status == 404 || response.head.status == 410:
                return "\(target.display) is missing on the server"
            case .success(let response) where response.head.isSuccess:
                if let length = response.head.contentLength, length != file.size {
                    return "\(target.display) is \(length) bytes on the server, \(file.size) here"
                }
                return nil
            default:
                // The server cannot say (no HEAD, or not now): trust the record.
                return nil
            }
        }
        return differences.lazy.compactMap { $0 }.first
    }

    /// A file's relative path and size, sendable to the tasks that ask the server about it.
    private struct Pair: Sendable {
        let relative: String
        let size: Int64
    }

    /// SHA-256 of every file, reusing the record's for files unchanged since it was written.
    static func digests(_ tree: UploadTree, reusing previous: [String: UploadRecord.SentFile]?) throws -> [String: UploadRecord.SentFile] {
        var result: [String: UploadRecord.SentFile] = [:]
        for file in tree.files {
            if let old = previous?[file.relative], old.fingerprint == file.fingerprint {
                result[file.relative] = old
                continue
            }
            let sha = try FS.digests(of: file.path, algorithms: ["sha256"])["sha256"] ?? ""
            result[file.relative] = UploadRecord.SentFile(size: file.fingerprint.size, sha256: sha, fingerprint: file.fingerprint)
        }
        return result
    }
}

/// Carries out one planned upload.
struct Uploader: Sendable {
    let upload: Upload
    let item: PlanItem
    let cache: Cache
    let engine: any Transport
    let redactor: Redactor
    /// The run's servers that nobody answered for; nil: each entry retries on its own.
    var unreachable: UnreachableHosts?
    let reporter: (any ProgressReporter)?
    /// Files sent at once for a folder (the run's `jobs`).
    let jobs: Int
    /// Bytes sent so far, for progress events.
    private let progress = UploadProgress()
    /// The progress counter, for the multipart upload in Uploader+S3.
    var uploadProgress: UploadProgress { progress }

    init(upload: Upload, item: PlanItem, cache: Cache, engine: any Transport, redactor: Redactor,
         reporter: (any ProgressReporter)?, jobs: Int) {
        self.jobs = jobs
        self.upload = upload
        self.item = item
        self.cache = cache
        self.engine = engine
        self.redactor = redactor
        self.reporter = reporter
    }

    func run() async -> ItemResult {
        let clock = ContinuousClock()
        let start = clock.now
        var sent: Int64 = 0
        var notes: [EntryNote] = []
        // The size of what is sent: no count goes past it. A form's bytes count as its files',
        // which plan shows (see the `.post` case); a request body counts once however often
        // curl sent some of it.
        var sizeToSend: Int64?
        // A `zip: true` archive apply built: removed however the entry ends (see `discardArchive`).
        var archiveBuilt: String?
        defer { if let archiveBuilt { Self.discardArchive(archiveBuilt) } }
        func result(_ outcome: ItemResult.Outcome) -> ItemResult {
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            // An upload that did not finish counts what left before it stopped: the files and
            // parts the server confirmed, and the bodies cut off (`sent` adds up whole requests
            // only, and only once they all went).
            var transferred: Int64
            if case .ok = outcome { transferred = sent } else { transferred = max(sent, progress.left) }
            if let sizeToSend { transferred = min(transferred, sizeToSend) }
            return ItemResult(item: item, outcome: outcome.scrubbed(redactor), transferred: transferred,
                              seconds: seconds, notes: notes.map { $0.scrubbed(redactor) })
        }
        switch item.action {
        case .skip:
            await forgetFinishedMultipart()
            return result(.skipped)
        case .error:
            // Planning cut short by the interruption (a hash stopped by the signal, a question
            // to the store) says nothing about the files or the server.
            if case .interrupted(let why)? = item.error { return result(.interrupted(why)) }
            if Task.isCancelled { return result(.interrupted(.beforeStart)) }
            return result(.failed(item.error ?? .other(message: item.reason)))
        default: break
        }
        guard let context = item.uploadContext else { return result(.failed(.other(message: "nothing planned to send"))) }
        // An entry not started when the run was interrupted does not start.
        if Task.isCancelled { return result(.interrupted(.beforeStart)) }
        reporter?.report(.started(item: item))
        if !context.zipFolder, !context.tree.linksNotSent.isEmpty {
            let note = EntryNote.linksNotSent(context.tree.linksNotSent)
            notes.append(note)
            reporter?.report(.note(index: item.index, note: note.scrubbed(redactor), kind: .upload))
        }
        let ticker = Task { [reporter, progress, index = item.index, total = item.bytes] in
            while !Task.isCancelled {
                try? await Task.sleep(for: EntryRecorder.interval)
                if Task.isCancelled { break }
                // A form's part headers and fields would take its bar past the files' size.
                let sent = min(progress.sent, total ?? .max)
                reporter?.report(.progress(index: index, transferred: sent, total: total, kind: .upload))
            }
        }
        defer { ticker.cancel() }
        var hashing: Task<[String: UploadRecord.SentFile], any Error>?
        var sourceHashing: Task<[String: UploadRecord.SentFile], any Error>?
        defer {
            hashing?.cancel()
            sourceHashing?.cancel()
        }
        do {
            var tree = context.tree
            if context.zipFolder {
                if context.record.sources == nil {
                    let folder = context.tree
                    sourceHashing = Task { try await BlockingIO.run { try UploadPlanner.digests(folder, reusing: nil) } }
                }
                archiveBuilt = Self.archivePath(upload, in: cache)
                tree = try await archive()
            }
            sizeToSend = tree.totalSize
            let inParts = try await archiveInParts(tree, context: context)
            if context.digestsPending, inParts == nil {
                let sending = tree
                hashing = Task { try await BlockingIO.run { try UploadPlanner.digests(sending, reusing: nil) } }
            }
            switch upload.method {
            case .put:
                let sending = context.inStore.isEmpty ? tree
                    : UploadTree(isDirectory: tree.isDirectory, files: tree.files.filter { !context.inStore.contains($0.relative) })
                let (bytes, putNotes) = try await putFiles(sending, recorded: inParts?.files ?? context.record.files,
                                                           partDigests: inParts?.parts ?? context.partDigests)
                sent += bytes
                notes += putNotes
            case .post:
                var parts: [MultipartForm.Part] = upload.fields.map { .field(name: $0.name, value: $0.value.expanded) }
                for file in tree.files {
                    parts.append(try MultipartForm.Part.file(name: upload.field, path: file.path, filename: file.relative,
                                                             contentType: upload.contentType))
                }
                let form = MultipartForm(parts: parts)
                let request = requests.upload(.multipart(form), url: upload.url.expanded, displayURL: upload.url.written)
                // Counted as the files' bytes, as plan shows them and as a PUT sends them: the
                // form's part headers and fields (a few hundred bytes each) are the protocol's,
                // and made a 4-byte file read as 199 B sent (`sizeToSend`).
                _ = try await send(request)
                sent += tree.totalSize
            }
            // What was sent must be what was hashed: a file changed meanwhile is reported, and
            // not recorded as uploaded.
            for file in context.tree.files + (context.zipFolder ? tree.files : [])
            where FS.fingerprint(file.path) != file.fingerprint {
                throw SyncError.changedWhileSending(path: file.path)
            }
            var record = context.record
            // Sent: the hashes started beside the sending finish even after a signal (they are
            // tasks of their own, which it does not reach), so that the upload is recorded and
            // not sent again whole; a send cut short cancels them (the `defer` above).
            if let hashing { record.files = try await hashing.value } else if let inParts { record.files = inParts.files }
            if let sourceHashing { record.sources = try await sourceHashing.value }
            try cache.prepare()
            try cache.saveUploadRecord(record, key: Cache.uploadKey(upload))
            return result(.ok)
        } catch is Interrupted {
            return result(.interrupted(.upload(resumes: requests.s3 != nil)))
        } catch is CancellationError {
            return result(.interrupted(.upload(resumes: requests.s3 != nil)))
        } catch {
            return result(.failed(SyncError(error)))
        }
    }

    /// Every request of this entry is built by one builder.
    var requests: RequestBuilder { RequestBuilder(upload: upload) }

    /// Every file of a PUT upload, up to `jobs` at once: a folder of small files is bound by
    /// round trips, not bandwidth. Files above the multipart threshold go one after another
    /// afterwards, since each already sends its parts in parallel (memory stays part size x
    /// parallel parts). The first failure stops the others and is the one reported.
    private func putFiles(_ tree: UploadTree, recorded: [String: UploadRecord.SentFile],
                          partDigests: S3PartDigests) async throws -> (Int64, [EntryNote]) {
        let isLarge = { (file: UploadTree.File) in upload.s3 != nil && file.fingerprint.size >= upload.multipartThreshold }
        var sent: Int64 = 0
        var notes: [EntryNote] = []
        try await withThrowingTaskGroup(of: Int64.self) { group in
            var next = tree.files.lazy.filter { !isLarge($0) }.makeIterator()
            func add() {
                guard let file = next.next() else { return }
                group.addTask { try await put(file, target: Self.target(upload, file: file, tree: tree)) }
            }
            for _ in 0..<max(1, jobs) { add() }
            while let bytes = try await group.next() {
                sent += bytes
                add()
            }
        }
        for file in tree.files where isLarge(file) {
            sent += try await multipart(file, target: Self.target(upload, file: file, tree: tree),
                                        sha256: recorded[file.relative]?.sha256 ?? "",
                                        knownSHA256s: partDigests.byFile[file.relative] ?? [:], notes: &notes)
        }
        return (sent, notes)
    }

    /// One file in one PUT (a PutObject for `s3://`, after which a multipart upload an earlier
    /// run left for the object is aborted: the object no longer needs it).
    private func put(_ file: UploadTree.File, target: (url: String, display: String)) async throws -> Int64 {
        guard upload.s3 != nil else {
            return try await send(requests.upload(.file(path: file.path), url: target.url, displayURL: target.display,
                                                  contentType: upload.contentType ?? ContentType.forFilename(file.relative)))
        }
        let sent = try await send(try await s3Put(file, target: target))
        await forgetMultipart(file, target: target)
        return sent
    }

    /// `zip: true`: zips the folder into the cache (a deterministic archive: the same tree gives
    /// the same bytes) and returns the archive as the one file to send.
    private func archive() async throws -> UploadTree {
        let zipPath = Self.archivePath(upload, in: cache)
        try cache.prepare()
        let epoch: Int64?
        do { epoch = try ArchiveCommands.sourceDateEpoch() } catch { throw SyncError.other(message: "cannot zip \(upload.from): \(error)") }
        let options = ZipWriter.Options(deterministic: upload.deterministic, sourceDateEpoch: epoch, excluded: cache.notUploaded)
        let source = upload.source
        do {
            _ = try await BlockingIO.run { try ZipWriter.write(directory: source, to: zipPath, options: options) }
        } catch {
            // Stopped by SIGINT/SIGTERM: the entry was interrupted, not failed.
            if Task.isCancelled { throw Interrupted() }
            guard let error = error as? ArchiveError else { throw SyncError.other(message: "cannot zip \(upload.from): \(error)") }
            throw SyncError.zip(from: upload.from, error: error)
        }
        let name = upload.archiveName
        guard let fingerprint = FS.fingerprint(zipPath) else { throw SyncError.other(message: "\(zipPath): the archive vanished") }
        return UploadTree(isDirectory: false, files: [UploadTree.File(relative: name, path: zipPath, fingerprint: fingerprint)])
    }

    /// The digests of an archive going to `s3://` in parts, made before it goes: the request
    /// that starts its upload names its SHA-256 (the metadata the next plan compares). Its
    /// parts' SHA-256s are made beside it, on the other core, so that none is hashed again as
    /// it goes. nil for anything else, whose digests are made beside the upload (a smaller
    /// archive's PutObject hashes it itself).
    private func archiveInParts(_ tree: UploadTree, context: UploadContext) async throws
        -> (files: [String: UploadRecord.SentFile], parts: S3PartDigests)? {
        guard context.zipFolder, requests.s3 != nil,
              tree.files.contains(where: { $0.fingerprint.size >= upload.multipartThreshold }) else { return nil }
        return try await S3PartDigests.beside(upload, tree: tree) { try UploadPlanner.digests(tree, reusing: nil) }
    }

    /// Where apply builds a `zip: true` upload's archive.
    static func archivePath(_ upload: Upload, in cache: Cache) -> String {
        cache.directory + "/" + Cache.uploadKey(upload) + ".zip"
    }

    /// Removes the archive an entry built, once the entry ends: sent and recorded, failed or
    /// interrupted. Nothing reads it again: plan judges the folder by its files' digests (and,
    /// for `s3://`, the object by the size and SHA-256 the record has of the archive), and apply
    /// zips the folder anew before every send (a multipart upload to resume checks its parts
    /// against the new archive). Kept, a sent one was a second copy of the folder in the cache
    /// for good, and a failed one a file `syncr cache` could only call unknown. One a killed run
    /// left goes at the start of the next apply (`Cache.removeLeftoverArchives`).
    static func discardArchive(_ path: String) {
        FS.remove(path)
    }

    /// Sends one request with the entry's retry rules; returns the bytes sent.
    private func send(_ base: HTTPRequest) async throws -> Int64 {
        var request = base
        let body = progress.track()
        defer { progress.untrack(body) }
        request.bodyProgress = body
        let policy = RetryPolicy(maxRetries: upload.settings.retries)
        var retrying = Retrying(retries: upload.settings.retries, index: item.index, kind: .upload,
                                reporter: reporter, redactor: redactor)
        // An error names the object this request sends (a folder's file), not the entry's prefix.
        retrying.s3 = requests.s3?.object(at: request.displayURL)
        retrying.credentials = requests.credentials
        retrying.unreachable = unreachable.map { ($0, request.url, request.displayURL) }
        let s3 = retrying.s3
        return try await retrying.run {
            let outcome = await engine.attempt(S3Object.resigned(request, by: s3), sink: DiscardSink())
            let failure: TransferError
            switch outcome.result {
            case .success(let response):
                // 303 See Other: the server took the upload and points at a result (not fetched).
                guard let error = response.statusError(url: request.displayURL), response.head.status != 303 else {
                    progress.requestDone(response.uploadedBytes, body: body)
                    return .done(response.uploadedBytes)
                }
                failure = error
            case .failure(let error):
                failure = error
            }
            // A repeated POST may publish twice: only when the request surely did not arrive,
            // the server said it did not act on it, or the entry allows it.
            let retryable = upload.retryPost
                ? policy.isRetryable(failure)
                : policy.isRetryable(failure, method: request.method, requestSent: outcome.requestSent)
            if !retryable, policy.maxRetries > 0, policy.isRetryable(failure) { return .failedUnsafeToRepeat(failure) }
            return .failed(failure, position: 0, retryable: retryable)
        }
    }

    /// Where one file of an upload goes: the URL itself for a single file, or the URL (a folder)
    /// joined with the file's relative path, each component percent-encoded, for a folder PUT.
    static func target(_ upload: Upload, file: UploadTree.File, tree: UploadTree) -> (url: String, display: String) {
        target(upload, relative: file.relative, isDirectory: tree.isDirectory)
    }

    static func target(_ upload: Upload, relative: String, isDirectory: Bool) -> (url: String, display: String) {
        if let s3 = s3Target(upload, relative: relative, isDirectory: isDirectory) { return s3 }
        guard isDirectory else { return (upload.url.expanded, upload.url.written) }
        // Split on bytes: a file name starting with a combining mark makes `/` part of a
        // Character, which a Character-wise split kept in the component (sent as %2F).
        let encoded = SafePath.split(relative).map { component in
            component.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? component
        }.joined(separator: "/")
        return (join(upload.url.expanded, encoded), join(upload.url.written, encoded))
    }

    /// `base` with `relative` joined to its path: before its query (`?token=` of an upload
    /// endpoint, which every file's request keeps), with its fragment dropped (never sent).
    /// Appended to the whole URL, every file of a folder went to one URL with a query that
    /// ended in its name, each replacing the last.
    static func join(_ base: String, _ relative: String) -> String {
        let end = base.firstIndex { $0 == "?" || $0 == "#" } ?? base.endIndex
        let path = base[..<end]
        var query = ""
        if end < base.endIndex, base[end] == "?" {
            query = String(base[end...].prefix { $0 != "#" })
        }
        return (path.hasSuffix("/") ? path + relative : path + "/" + relative) + query
    }
}

/// Bytes of an upload sent by its finished requests plus those in flight, for progress events.
final class UploadProgress: Sendable {
    private struct State {
        var finished: Int64 = 0
        var inFlight: [ObjectIdentifier: BodyProgress] = [:]
        /// Bytes of requests that ended without being sent whole (cut off, interrupted).
        var cutShort: Int64 = 0
    }
    private let state = Locked(State())

    /// A request about to be sent: what curl reads of its body counts until it is untracked.
    func track() -> BodyProgress {
        let body = BodyProgress()
        state.withLock { $0.inFlight[ObjectIdentifier(body)] = body }
        return body
    }

    /// The request ended, sent or not (one sent whole was untracked by `requestDone` already).
    func untrack(_ body: BodyProgress) {
        state.withLock {
            if let left = $0.inFlight.removeValue(forKey: ObjectIdentifier(body)) { $0.cutShort += left.sent }
        }
    }

    /// A request was sent whole: its bytes count from now on (and no longer as in flight, in
    /// the same step, so a reader never sees them twice).
    func requestDone(_ bytes: Int64, body: BodyProgress? = nil) {
        state.withLock {
            if let body { $0.inFlight.removeValue(forKey: ObjectIdentifier(body)) }
            $0.finished += bytes
        }
    }

    var sent: Int64 {
        state.withLock { state in state.inFlight.values.reduce(state.finished) { $0 + $1.sent } }
    }

    /// Every byte that left, requests cut short included: what an upload that did not finish
    /// reports as transferred.
    var left: Int64 {
        state.withLock { state in state.inFlight.values.reduce(state.finished + state.cutShort) { $0 + $1.sent } }
    }
}
