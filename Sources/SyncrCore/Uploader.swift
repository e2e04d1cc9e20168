#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrDigest
import SyncrHTTP
import SyncrManifest
import Synchronization

/// What an upload will send, worked out while planning and carried to apply.
struct UploadContext: Sendable {
    var tree: UploadTree
    /// The record to save once the upload succeeded (sizes and SHA-256 of what is sent).
    var record: UploadRecord
    /// The digests are not known yet (nothing was ever sent): they are computed while sending.
    var digestsPending: Bool
}

extension Cache {
    /// The record key of an upload: method, source and target together, since several entries
    /// may send to one URL and one file may go to several.
    static func uploadKey(_ upload: Upload) -> String {
        Digest.hex(.md5, of: Array("upload\n\(upload.method.rawValue)\n\(upload.source)\n\(upload.url.expanded)".utf8))
    }

    func uploadRecordPath(_ key: String) -> String { directory + "/" + key + ".upload" }

    func loadUploadRecord(_ key: String) -> UploadRecord? {
        guard let bytes = FS.readAll(uploadRecordPath(key)), !bytes.isEmpty else { return nil }
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
    let engine: TransferEngine
    let redactor: Redactor
    let force: Bool

    func plan(_ upload: Upload) async -> PlanItem {
        var item = PlanItem(kind: "upload", index: upload.index, url: redactor.scrub(upload.url.written),
                            to: "", action: .upload, size: nil, offset: 0, bytes: nil, reason: "")
        item.from = upload.from
        func fail(_ reason: String) -> PlanItem {
            var failed = item
            failed.action = .error
            failed.reason = redactor.scrub(reason)
            return failed
        }
        var scanned: UploadTree
        do {
            scanned = try UploadTree.scan(upload.source)
        } catch {
            return fail("from: \(error.description.replacingOccurrences(of: upload.source, with: upload.from))")
        }
        if scanned.isDirectory && scanned.files.isEmpty && !upload.zip {
            return fail("from: \(upload.from) is an empty folder: nothing to send")
        }
        if upload.zip {
            guard scanned.isDirectory else { return fail("zip: true needs a folder in from:, and \(upload.from) is a file") }
            // The folder goes as one archive, made in the cache; the same tree gives the same
            // bytes (deterministic), so an unchanged folder is recognised by the archive's digest.
            let zipPath = cache.directory + "/" + Cache.uploadKey(upload) + ".zip"
            do {
                try cache.prepare()
                cache.removeStaleTemporaries(of: Cache.uploadKey(upload))
                let options = ZipWriter.Options(deterministic: upload.deterministic,
                                                sourceDateEpoch: ArchiveCommands.sourceDateEpoch())
                let source = upload.source
                _ = try await BlockingIO.run { try ZipWriter.write(directory: source, to: zipPath, options: options) }
            } catch {
                return fail("cannot zip \(upload.from): \(error)")
            }
            let name = ((upload.source as NSString).lastPathComponent.isEmpty ? "upload" : (upload.source as NSString).lastPathComponent) + ".zip"
            guard let fingerprint = FS.fingerprint(zipPath) else { return fail("\(zipPath): the archive vanished") }
            scanned = UploadTree(isDirectory: false, files: [UploadTree.File(relative: name, path: zipPath, fingerprint: fingerprint)])
        }
        let key = Cache.uploadKey(upload)
        let previous = cache.loadUploadRecord(key)
        let tree = scanned
        var files: [String: UploadRecord.SentFile] = [:]
        // With nothing sent before there is nothing to compare: the digests for the record are
        // computed while the upload runs, on the other core, rather than in a pass of their own.
        if previous != nil {
            do {
                files = try await BlockingIO.run { try Self.digests(tree, reusing: previous) }
            } catch {
                return fail("\(error)")
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
        let changed = files.filter { previous.files[$0.key]?.sha256 != $0.value.sha256 }.count
            + previous.files.keys.filter { files[$0] == nil }.count
        if changed > 0 {
            item.reason = tree.isDirectory ? "\(changed) file\(changed == 1 ? "" : "s") changed since the last upload"
                                           : "changed since the last upload"
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

    /// For PUT targets: asks the server whether what was sent is still there, at the same size.
    /// Returns why it must be sent again, or nil.
    private func remoteDifference(_ upload: Upload, tree: UploadTree) async -> String? {
        for file in tree.files {
            let target = Uploader.target(upload, file: file, tree: tree)
            let request = RequestBuilder(upload: upload).head(url: target.url, displayURL: target.display)
            switch await engine.perform(request, sink: DiscardSink()) {
            case .success(let response) where response.head.status == 404 || response.head.status == 410:
                return "\(target.display) is missing on the server"
            case .success(let response) where response.head.isSuccess:
                if let length = response.head.contentLength, length != file.fingerprint.size {
                    return "\(target.display) is \(length) bytes on the server, \(file.fingerprint.size) here"
                }
            default:
                // The server cannot say (no HEAD, or not now): trust the record.
                continue
            }
        }
        return nil
    }

    /// SHA-256 of every file, reusing the record's for files unchanged since it was written.
    static func digests(_ tree: UploadTree, reusing previous: UploadRecord?) throws -> [String: UploadRecord.SentFile] {
        var result: [String: UploadRecord.SentFile] = [:]
        for file in tree.files {
            if let old = previous?.files[file.relative], old.fingerprint == file.fingerprint {
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
    let engine: TransferEngine
    let redactor: Redactor
    let reporter: (any ProgressReporter)?
    /// Bytes sent so far, for progress events.
    private let progress = UploadProgress()

    init(upload: Upload, item: PlanItem, cache: Cache, engine: TransferEngine, redactor: Redactor,
         reporter: (any ProgressReporter)?) {
        self.upload = upload
        self.item = item
        self.cache = cache
        self.engine = engine
        self.redactor = redactor
        self.reporter = reporter
    }

    typealias Failure = EntryFailure

    func run() async -> ItemResult {
        let clock = ContinuousClock()
        let start = clock.now
        var sent: Int64 = 0
        var notes: [String] = []
        func result(_ status: ItemResult.Status, _ error: String? = nil) -> ItemResult {
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return ItemResult(item: item, status: status, transferred: sent, seconds: seconds,
                              error: error.map(redactor.scrub), notes: notes.map(redactor.scrub))
        }
        switch item.action {
        case .skip: return result(.skipped)
        case .error: return result(.failed, item.reason)
        default: break
        }
        guard let context = item.uploadContext else { return result(.failed, "nothing planned to send") }
        let interrupted = "interrupted before the server confirmed it; the next run sends it again"
        // An entry not started when the run was interrupted does not start.
        if Task.isCancelled { return result(.interrupted, "interrupted before it started") }
        reporter?.report(.started(item: item))
        let ticker = Task { [reporter, progress, index = item.index, total = item.bytes] in
            while !Task.isCancelled {
                try? await Task.sleep(for: EntryRecorder.interval)
                if Task.isCancelled { break }
                reporter?.report(.progress(index: index, transferred: progress.sent, total: total, kind: "upload"))
            }
        }
        defer { ticker.cancel() }
        let tree = context.tree
        let hashing: Task<[String: UploadRecord.SentFile], any Error>? = context.digestsPending
            ? Task { try await BlockingIO.run { try UploadPlanner.digests(tree, reusing: nil) } }
            : nil
        defer { hashing?.cancel() }
        do {
            switch upload.method {
            case .put:
                for file in context.tree.files {
                    let target = Self.target(upload, file: file, tree: context.tree)
                    let request = requests.upload(.file(path: file.path), url: target.url, displayURL: target.display,
                                                  contentType: upload.contentType ?? ContentType.forFilename(file.relative))
                    sent += try await send(request, notes: &notes)
                }
            case .post:
                var parts: [MultipartForm.Part] = upload.fields.map { .field(name: $0.name, value: $0.value.expanded) }
                for file in context.tree.files {
                    parts.append(try MultipartForm.Part.file(name: upload.field, path: file.path, filename: file.relative,
                                                             contentType: upload.contentType))
                }
                let form = MultipartForm(parts: parts)
                let request = requests.upload(.multipart(form), url: upload.url.expanded, displayURL: upload.url.written)
                sent += try await send(request, notes: &notes)
            }
            // What was sent must be what was hashed: a file changed meanwhile is reported, and
            // not recorded as uploaded.
            for file in context.tree.files where FS.fingerprint(file.path) != file.fingerprint {
                throw Failure(message: "\(file.path): changed while it was being uploaded; run again to send the new version")
            }
            var record = context.record
            if let hashing { record.files = try await hashing.value }
            try cache.prepare()
            try cache.saveUploadRecord(record, key: Cache.uploadKey(upload))
            return result(.ok)
        } catch is Interrupted {
            return result(.interrupted, interrupted)
        } catch is CancellationError {
            return result(.interrupted, interrupted)
        } catch let failure as Failure {
            return result(.failed, failure.message)
        } catch let error as TransferError {
            return result(.failed, error.description)
        } catch {
            return result(.failed, "\(error)")
        }
    }

    /// Every request of this entry is built by one builder.
    private var requests: RequestBuilder { RequestBuilder(upload: upload) }

    /// Sends one request with the entry's retry rules; returns the bytes sent.
    private func send(_ base: HTTPRequest, notes: inout [String]) async throws -> Int64 {
        var request = base
        request.bodyProgress = progress.current
        let policy = RetryPolicy(maxRetries: upload.settings.retries)
        let retrying = Retrying(retries: upload.settings.retries, index: item.index, kind: "upload",
                                reporter: reporter, redactor: redactor)
        return try await retrying.run {
            let outcome = await engine.attempt(request, sink: DiscardSink())
            let failure: TransferError
            switch outcome.result {
            case .success(let response):
                guard let error = response.statusError(url: request.displayURL) else {
                    progress.requestDone(response.uploadedBytes)
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
            return .failed(failure, position: 0, retryable: retryable)
        }
    }

    /// Where one file of an upload goes: the URL itself for a single file, or the URL (a folder)
    /// joined with the file's relative path, each component percent-encoded, for a folder PUT.
    static func target(_ upload: Upload, file: UploadTree.File, tree: UploadTree) -> (url: String, display: String) {
        guard tree.isDirectory else { return (upload.url.expanded, upload.url.written) }
        let encoded = file.relative.split(separator: "/").map { component in
            String(component).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? String(component)
        }.joined(separator: "/")
        func join(_ base: String) -> String { base.hasSuffix("/") ? base + encoded : base + "/" + encoded }
        return (join(upload.url.expanded), join(upload.url.written))
    }
}

/// Bytes of an upload sent by its finished requests plus the one in flight, for progress events.
final class UploadProgress: Sendable {
    /// The request in flight.
    let current = BodyProgress()
    private let finished = Locked<Int64>(0)

    /// A request was sent whole: its bytes count from now on.
    func requestDone(_ bytes: Int64) {
        // Reset first: a reader in between sees too little for a moment, never too much.
        current.reset()
        finished.withLock { $0 += bytes }
    }

    var sent: Int64 { finished.withLock { $0 } + current.sent }
}
