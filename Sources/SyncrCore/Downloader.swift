#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrHTTP
import SyncrManifest

/// Carries out one planned download: fetch into the cache entry (resuming and retrying),
/// verify, and move the finished file into place.
struct Downloader: Sendable {
    let download: Download
    let item: PlanItem
    let cache: Cache
    let engine: TransferEngine
    let redactor: Redactor
    let reporter: (any ProgressReporter)?
    /// Flushes small finished files together.
    let flusher: GroupFlush
    /// Folders to flush once at the end of the run.
    let folders: ChangedFolders
    /// Network slots (`jobs`): held while fetching, given back before the finished file is
    /// flushed and moved, so that the next files download while this one is made durable.
    let slots: AsyncSemaphore
    /// Files at least this large are flushed on their own (`fdatasync`); smaller ones join a
    /// group flush.
    static let ownFlushThreshold: Int64 = 8 << 20
    /// How often progress is made durable while bytes flow.
    var checkpointInterval: Duration = EntryRecorder.interval

    private var key: String { Cache.key(for: download.url.expanded) }
    private var url: String { download.url.written }
    /// The folder the destination is in.
    private var parent: String { (download.destination as NSString).deletingLastPathComponent }
    /// Beside the destination, named by the entry's key: the copy made when the cache is on
    /// another file system, and the folder an archive is unpacked into before the swap.
    private var copyPath: String { parent + "/.syncr-" + key + ".tmp" }
    private var stagingPath: String { parent + "/.syncr-unpack-" + key }

    /// Why an entry failed, as shown to the operator.
    struct Failure: Error {
        var message: String
        /// The cache's file system had no room for the preallocation.
        var noRoom = false
    }

    func run() async -> ItemResult {
        let clock = ContinuousClock()
        let start = clock.now
        var notes: [String] = []
        var transferred: Int64 = 0
        var finalSize: Int64?
        func result(_ status: ItemResult.Status, _ error: String? = nil) -> ItemResult {
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            var item = self.item
            if item.size == nil, let finalSize {
                // Fetched without asking first: the answer told the size.
                item.size = finalSize
                item.bytes = finalSize - item.offset
            }
            return ItemResult(item: item, status: status, transferred: transferred, seconds: seconds,
                              error: error.map(redactor.scrub), notes: notes.map(redactor.scrub))
        }
        removeLeftovers()
        switch item.action {
        case .error:
            // A probe cut short by the interruption (its retries too) says nothing about the server.
            if case .cancelled? = item.probeError { return result(.interrupted, interruptedMessage()) }
            if Task.isCancelled { return result(.interrupted, interruptedMessage()) }
            return result(.failed, item.probeError.map { "\($0)" } ?? item.reason)
        case .skip:
            recordVerifiedDestination()
            return result(.skipped)
        case .upload:
            return result(.failed, "an upload item reached the downloader")
        case .download, .restart, .resume:
            break
        }
        // An entry not started when the run was interrupted does not start.
        if Task.isCancelled { return result(.interrupted, interruptedMessage()) }
        reporter?.report(.started(item: item))
        // What the record vouched for before this run, to count what an interrupted run added
        // (pieces fetched in parallel are known only from the record once they were stopped).
        let keptBefore = item.action == .resume ? cache.loadState(key)?.cachedBytes ?? 0 : 0
        func interrupted() -> ItemResult {
            let kept = cache.loadState(key)?.cachedBytes ?? 0
            transferred = max(transferred, kept - keptBefore)
            return result(.interrupted, interruptedMessage())
        }
        let slot = Slot(semaphore: slots)
        defer { Task { await slot.release() } }
        do {
            finalSize = try await fetchVerifyPromote(notes: &notes, transferred: &transferred, slot: slot)
            return result(.ok)
        } catch is Interrupted {
            return interrupted()
        } catch is CancellationError {
            return interrupted()
        } catch let failure as Failure {
            return result(.failed, failure.message)
        } catch let error as FileError {
            return result(.failed, error.description)
        } catch {
            return result(.failed, "\(error)")
        }
    }

    /// What a run killed mid-way leaves beside the destination goes, whatever this run does
    /// with the entry: one that is up to date from now on would otherwise keep it for good.
    /// `apply` holds the cache lock, so no other run is writing these names.
    private func removeLeftovers() {
        FS.remove(copyPath)
        FolderReplace.removeTree(stagingPath)
    }

    /// What an interrupted entry kept, from its record on disk: what the next run resumes from.
    private func interruptedMessage() -> String {
        guard let state = cache.loadState(key), state.cachedBytes > 0, !state.complete else {
            return "interrupted before any bytes were kept"
        }
        let of = state.size.map { " of \(ByteSize.format($0))" } ?? ""
        return "interrupted with \(ByteSize.format(state.cachedBytes))\(of) kept in the cache; run the same command again to resume"
    }

    /// A skip decided by hashing the destination: remember it, so the next plan need not hash.
    private func recordVerifiedDestination() {
        guard let digests = item.destinationDigests, let remote = item.remote,
              let fingerprint = FS.fingerprint(download.destination) else { return }
        var state = EntryState(url: redactor.scrub(url))
        state.size = remote.size ?? fingerprint.size
        state.etag = remote.etag
        state.lastModified = remote.lastModified
        state.good = fingerprint.size
        state.complete = true
        state.verified = digests
        state.destination = download.destination
        state.destinationFingerprint = fingerprint
        try? cache.prepare()
        FS.remove(cache.dataPath(key))
        try? cache.saveState(state, key: key)
    }

    /// Returns the size of the file now in place.
    private func fetchVerifyPromote(notes: inout [String], transferred: inout Int64, slot: Slot) async throws -> Int64 {
        await slot.acquire()
        // Checked before anything in the cache is touched: a cancelled entry keeps its partial.
        if Task.isCancelled { throw Interrupted() }
        try cache.prepare()
        let dataPath = cache.dataPath(key)
        var offset: Int64 = 0
        var state = EntryState(url: redactor.scrub(url))
        if item.action == .resume, let saved = cache.loadState(key), saved.good == item.offset {
            state = saved
            offset = saved.good
        } else {
            cache.discard(key)
        }
        // A fresh file is created after the old one was unlinked, so that no other name for the
        // old inode (a destination it was once moved to) can ever be written through.
        let flags = offset > 0 ? (O_RDWR | O_CLOEXEC) : (O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC)
        let fd = open(dataPath, flags, 0o666)
        guard fd >= 0 else { throw FileError(path: dataPath, operation: "open", errno: errno) }
        var fdOpen = true
        defer { if fdOpen { close(fd) } }
        let recorder = EntryRecorder(state: state, cache: cache, key: key, fd: fd, redactor: redactor)
        var budget = RetryBudget(retries: download.settings.retries, position: offset)
        // Cleared when the server showed it cannot continue a partial file; from then on every
        // attempt starts at byte 0.
        var canResume = true
        var leadTried = false
        func note(_ message: String) {
            notes.append(message)
            reporter?.report(.note(index: item.index, message: message))
        }

        if let plan = segmentation(state: state) {
            let fetch = SegmentedFetch(download: download, size: plan.size, validator: plan.validator, fd: fd,
                                       dataPath: dataPath, engine: engine, recorder: recorder,
                                       reporter: reporter, index: item.index)
            if state.cachedBytes == 0, let remote = item.remote {
                // The record names the version before any of its bytes are counted.
                try await recorder.update {
                    $0.size = remote.size
                    $0.etag = remote.etag
                    $0.lastModified = remote.lastModified
                    $0.finalURL = redactor.scrubLocation(remote.finalURL)
                }
            }
            do {
                try await reserve(fd: fd, size: plan.size, dataPath: dataPath, recorder: recorder)
            } catch let failure as Failure where failure.noRoom {
                // What a failed preallocation took, no record vouches for: give it back.
                if await recorder.state.cachedBytes == 0 { _ = ftruncate(fd, 0) }
                throw failure
            }
            let missing = await recorder.state.ranges.gaps(upTo: plan.size)
            let (outcome, received) = try await fetch.run(missing: missing)
            transferred += received
            switch outcome {
            case .complete:
                offset = plan.size
            case .fallback(let reason):
                note("\(reason); fell back to one stream from byte 0")
                canResume = false
                try await recorder.reset()
                offset = 0
            }
        }

        while true {
            state = await recorder.state
            if let total = state.size, offset >= total, offset > 0 { break }
            if Task.isCancelled { throw Interrupted() }
            if offset > 0 && (!canResume || state.ifRangeValidator == nil) {
                if canResume {
                    note("the server gave no strong ETag or Last-Modified to resume against; restarted from byte 0")
                    canResume = false
                }
                try await recorder.reset()
                offset = 0
                state = await recorder.state
            }
            // A fresh file no one asked the server about (apply skips the HEAD for those): ask for
            // `bytes=0-`, so that the answer says at once whether ranges work and how large the
            // file is; a large one is then shared out to the other connections as it arrives.
            let leading = offset == 0 && item.remote == nil && canResume && !leadTried
                && download.settings.connections > 1
            leadTried = leadTried || leading
            let range = offset > 0 ? ByteRange(start: offset) : (leading ? ByteRange(start: 0) : nil)
            let headSignal = OneShot<HTTPResponseHead>()
            let request = HTTPRequest(url: download.url.expanded, displayURL: url,
                                      headers: download.settings.headers.map { ($0.name, $0.value.expanded) },
                                      range: range, ifRange: offset > 0 ? state.ifRangeValidator : nil,
                                      connectTimeoutMilliseconds: download.settings.timeoutMilliseconds,
                                      lowSpeedLimit: Int(download.settings.lowSpeed),
                                      lowSpeedTimeSeconds: max(1, download.settings.timeoutMilliseconds / 1000))
                .using(download.settings)
            var onResponse: (@Sendable (HTTPResponseHead) -> Void)?
            if leading { onResponse = { head in headSignal.fulfil(head) } }
            let sink = FileSink(fd: fd, offset: offset, requestedRange: range,
                                expectedTotal: offset > 0 ? state.size : nil,
                                displayURL: url, displayPath: dataPath, onResponse: onResponse)
            let base = offset
            let ticker = Task { [checkpointInterval, reporter, index = item.index] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: checkpointInterval)
                    if Task.isCancelled { break }
                    sink.writeHeldBytes()
                    let written = sink.written
                    if written > 0 {
                        try? await recorder.checkpoint(good: base + written, head: sink.head)
                        reporter?.report(.progress(index: index, transferred: written, total: sink.head?.resourceSize))
                    }
                }
            }
            var helped: (size: Int64, fallback: String?)?
            let outcome: Result<HTTPResponse, TransferError>
            if leading {
                // Unstructured, so the run's cancellation reaches it only through the handlers below.
                let transfer = Task { await engine.perform(request, sink: sink) }
                let watcher = Task { _ = await transfer.value; headSignal.fulfil(nil) }
                do {
                    let head = await withTaskCancellationHandler { await headSignal.wait() } onCancel: { transfer.cancel() }
                    if let head, let split = leadSplit(head) {
                        await recorder.adopt(head)
                        try await recorder.update { _ in }
                        try await reserve(fd: fd, size: split.size, dataPath: dataPath, recorder: recorder)
                        sink.bound(to: split.size)
                        let helpers = SegmentedFetch(download: download, size: split.size, validator: split.validator,
                                                     fd: fd, dataPath: dataPath, engine: engine, recorder: recorder,
                                                     reporter: reporter, index: item.index)
                        let (helpOutcome, received) = try await helpers.help(sink)
                        transferred += received
                        if case .fallback(let reason) = helpOutcome {
                            transfer.cancel()
                            helped = (split.size, reason)
                        } else {
                            helped = (split.size, nil)
                        }
                    }
                } catch {
                    transfer.cancel()
                    _ = await transfer.value
                    ticker.cancel()
                    _ = await ticker.value
                    // No room for the preallocation: the bytes of the first response that no
                    // record vouches for are given back, now that nothing writes or records.
                    if (error as? Failure)?.noRoom == true, await recorder.state.cachedBytes == 0 {
                        _ = ftruncate(fd, 0)
                    }
                    throw error
                }
                outcome = await withTaskCancellationHandler { await transfer.value } onCancel: { transfer.cancel() }
                watcher.cancel()
            } else {
                outcome = await engine.perform(request, sink: sink)
            }
            ticker.cancel()
            _ = await ticker.value
            if let helped {
                // The lead's own part is recorded; whatever no connection finished is fetched
                // in pieces again, with the usual retries.
                transferred += sink.written
                if sink.written > 0 { try await recorder.checkpoint([0..<sink.written], head: sink.head) }
                var fallback = helped.fallback
                if fallback == nil {
                    let gaps = await recorder.state.ranges.gaps(upTo: helped.size)
                    if !gaps.isEmpty {
                        let rest = SegmentedFetch(download: download, size: helped.size,
                                                  validator: await recorder.state.ifRangeValidator ?? "",
                                                  fd: fd, dataPath: dataPath, engine: engine, recorder: recorder,
                                                  reporter: reporter, index: item.index)
                        let (restOutcome, received) = try await rest.run(missing: gaps)
                        transferred += received
                        if case .fallback(let reason) = restOutcome { fallback = reason }
                    }
                }
                if let fallback {
                    note("\(fallback); fell back to one stream from byte 0")
                    canResume = false
                    try await recorder.reset()
                    offset = 0
                    continue
                }
                offset = helped.size
                break
            }
            let written = sink.written
            transferred += written
            offset = base + written

            var failure: TransferError?
            switch outcome {
            case .success(let response):
                if let statusError = response.statusError(url: url) {
                    failure = statusError
                } else {
                    await recorder.adopt(response.head)
                    state = await recorder.state
                    if let total = state.size, offset < total {
                        failure = .connection(url: url, code: 18,
                            message: "the connection closed after \(offset) of \(total) bytes")
                    }
                }
            case .failure(let error):
                failure = error
            }
            guard let failure else {
                await recorder.remember(0..<offset, head: sink.head)
                break
            }
            if written > 0 {
                // Keep what arrived: flushed, then recorded, so the next attempt (or run) resumes.
                offset = try await keep(good: offset, head: sink.head, fd: fd, recorder: recorder)
            }
            if case .local(_, let code, _) = failure, Self.isSpaceError(code) {
                throw Failure(message: spaceFailure(code, kept: offset))
            }

            switch failure {
            case .rangeNotHonoured:
                // RFC 9110 lets a server ignore Range; its 200 body starts at byte 0 and must
                // never be appended to the bytes we have.
                canResume = false
                note("the server ignored the Range request; restarted from byte 0")
                continue
            case .invalidResponse(_, let message) where base > 0 && canResume:
                canResume = false
                note("the answer to the resume request did not fit the cached bytes (\(message)); restarted from byte 0")
                continue
            case .cancelled:
                throw Interrupted()
            default:
                break
            }
            let delay: Double
            do {
                delay = try budget.delay(after: failure, position: offset)
            } catch {
                throw Failure(message: describe(failure, offset: offset) + error.suffix)
            }
            reporter?.report(.retrying(index: item.index, attempt: budget.failuresWithoutProgress, delay: delay,
                                       error: redactor.scrub(failure.description)))
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
        }

        await slot.release()
        // Complete: trim anything beyond the end (left by an older, longer attempt), then make
        // the bytes durable before anything points at them.
        state = await recorder.state
        let finalSize = state.size ?? offset
        var st = stat()
        if fstat(fd, &st) == 0, Int64(st.st_size) != finalSize, ftruncate(fd, off_t(finalSize)) != 0 {
            throw FileError(path: dataPath, operation: "trim", errno: errno)
        }
        if finalSize >= Self.ownFlushThreshold {
            try await BlockingIO.run { [fd, dataPath] in
                if fdatasync(fd) != 0 { throw FileError(path: dataPath, operation: "flush", errno: errno) }
            }
        } else {
            try await flusher.flush()
        }
        close(fd)
        fdOpen = false
        try await verify(dataPath: dataPath)
        let digests = Dictionary(uniqueKeysWithValues: download.checksums.map { ($0.algorithm, $0.hex) })
        await recorder.remember(0..<finalSize, head: nil)
        if download.unzip {
            try await unpack(dataPath: dataPath, recorder: recorder) {
                $0.size = finalSize
                $0.complete = true
                $0.verified = digests
            }
            return finalSize
        }
        try await promote(dataPath: dataPath, recorder: recorder) {
            $0.size = finalSize
            $0.complete = true
            $0.verified = digests
        }
        return finalSize
    }

    /// Whether a `bytes=0-` answer is worth sharing out: a 206 for a file of at least
    /// `min_split` bytes that names a validator for the other connections' If-Range.
    private func leadSplit(_ head: HTTPResponseHead) -> (size: Int64, validator: String)? {
        guard head.status == 206, let size = head.contentRange?.total, size >= download.settings.minSplit,
              let validator = RemoteResource(head: head, method: "GET").ifRangeValidator else { return nil }
        return (size, validator)
    }

    /// Whether to fetch in parallel pieces, and with which validator: only a file of at least
    /// `min_split` bytes, from a server that accepts ranges and gives a validator for If-Range.
    private func segmentation(state: EntryState) -> (size: Int64, validator: String)? {
        let settings = download.settings
        guard settings.connections > 1, let remote = item.remote, remote.acceptsRanges,
              let size = remote.size, size >= settings.minSplit else { return nil }
        if state.cachedBytes > 0 {
            guard state.size == size, let validator = state.ifRangeValidator else { return nil }
            return (size, validator)
        }
        guard let validator = remote.ifRangeValidator else { return nil }
        return (size, validator)
    }

    private func verify(dataPath: String) async throws {
        guard !download.checksums.isEmpty else { return }
        let algorithms = download.checksums.map(\.algorithm)
        let actual = try await BlockingIO.run { try FS.digests(of: dataPath, algorithms: algorithms) }
        for expected in download.checksums where actual[expected.algorithm] != expected.hex {
            cache.discard(key)
            throw Failure(message: "\(url): \(expected.algorithm) mismatch: expected \(expected.hex), got \(actual[expected.algorithm] ?? "?"); "
                + "the download was discarded and \(download.to) left as it was (if the file changed on purpose, update \(expected.algorithm) in the manifest)")
        }
    }

    /// Moves the finished data onto the destination in one step.
    /// Unpacks the finished archive into a staging folder beside the destination, and swaps it in
    /// only when every entry was unpacked and verified; a failure leaves the old folder as it
    /// was. The archive stays in the cache, so a folder changed later is unpacked again without
    /// a download.
    private func unpack(dataPath: String, recorder: EntryRecorder,
                        finish: @Sendable (inout EntryState) -> Void) async throws {
        let destination = download.destination
        // Unpacking stopped by a full or read-only disk: the verified archive is recorded as
        // complete, so the next run unpacks it again from the cache instead of downloading it.
        func keepArchive() async {
            try? await recorder.update(durable: false) {
                finish(&$0)
                $0.destinationTree = nil
            }
        }
        try FS.makeDirectories(parent)
        if [.file, .other].contains(FS.kind(destination)) {
            throw Failure(message: "\(download.to): a file stands where the unpacked folder goes; move it away and run again")
        }
        let staging = stagingPath
        FolderReplace.removeTree(staging)
        guard mkdir(staging, 0o755) == 0 else {
            let code = errno
            if Self.isSpaceError(code) {
                await keepArchive()
                throw Failure(message: "cannot unpack into \(parent): \(String(cString: strerror(code))); "
                    + "the archive is complete in the cache: make room (or make the folder writable) and run again")
            }
            throw FileError(path: staging, operation: "create the staging folder", errno: code)
        }
        let name = Self.archiveName(download.url.written)
        let strip = download.stripComponents
        let limits = ExtractionLimits.forDownload(download)
        do {
            _ = try await BlockingIO.run {
                try Unpack.extract(archive: dataPath, name: name, into: staging, stripComponents: strip, limits: limits)
            }
        } catch {
            FolderReplace.removeTree(staging)
            var hint = ""
            if case .io(_, let code, _)? = error as? ArchiveError, Self.isSpaceError(code) {
                await keepArchive()
                hint = "; the archive is complete in the cache and \(download.to) was left as it was: "
                    + "make room (or make the folder writable) and run again"
            } else if case .limit? = error as? ArchiveError {
                // Raising max_unpacked_size or making room must not cost another download.
                await keepArchive()
                hint = "; the archive is complete in the cache and \(download.to) was left as it was"
            }
            throw Failure(message: "\(url): cannot unpack into \(download.to): \(error)\(hint)")
        }
        do {
            try FolderReplace.replace(destination, with: staging, display: download.to)
        } catch {
            FolderReplace.removeTree(staging)
            throw error
        }
        let tree = FolderReplace.fingerprint(destination)
        try await recorder.update(durable: false) {
            finish(&$0)
            $0.destination = destination
            $0.destinationFingerprint = nil
            $0.destinationTree = tree
        }
        await folders.add(parent)
    }

    /// The last path component of a URL (without query or fragment): what the archive's format
    /// is guessed from.
    static func archiveName(_ url: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let trimmed = path.split(separator: "#", maxSplits: 1).first.map(String.init) ?? path
        return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
    }

    /// The record is written (with `finish` applied) before the rename without a flush of its
    /// own: losing it to a power cut costs a second download, never a wrong file.
    private func promote(dataPath: String, recorder: EntryRecorder,
                         finish: @Sendable (inout EntryState) -> Void) async throws {
        let destination = download.destination
        let folder = (destination as NSString).deletingLastPathComponent
        try FS.makeDirectories(folder)
        switch FS.kind(destination) {
        case .directory, .other:
            throw Failure(message: "\(download.to): exists and is not a regular file; move it away and run again")
        case .file:
            // Replacing a file keeps its permissions.
            var st = stat()
            if stat(destination, &st) == 0 { chmod(dataPath, st.st_mode & 0o777) }
        case .missing:
            break
        }
        // rename keeps the inode, size and mtime, so the fingerprint can be recorded first: a
        // crash right after the rename still finds a record that matches the destination.
        let fingerprint = FS.fingerprint(dataPath)
        try await recorder.update(durable: false) {
            finish(&$0)
            $0.destination = destination
            $0.destinationFingerprint = fingerprint
        }
        if rename(dataPath, destination) == 0 {
            await folders.add(folder)
            return
        }
        let code = errno
        guard code == EXDEV else {
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw FileError(path: download.to, operation: "move the finished file into place", errno: code)
        }
        // The cache is on another file system: copy beside the destination, then rename.
        let temp = copyPath
        do {
            try await BlockingIO.run { try FS.copy(dataPath, to: temp) }
        } catch {
            FS.remove(temp)
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw Failure(message: copyFailure(error, folder: folder))
        }
        if rename(temp, destination) != 0 {
            let e = errno
            FS.remove(temp)
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw FileError(path: download.to, operation: "move the finished file into place", errno: e)
        }
        await folders.add(folder)
        let copied = FS.fingerprint(destination)
        try await recorder.update(durable: false) { $0.destinationFingerprint = copied }
        FS.remove(dataPath)
    }

    /// Errors that more free space (or a writable file system) would cure.
    static func isSpaceError(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EROFS
    }

    /// Preallocates the cache file; a file system too full for it stops the entry up front,
    /// before any byte is fetched.
    private func reserve(fd: Int32, size: Int64, dataPath: String, recorder: EntryRecorder) async throws {
        do {
            try SegmentedFetch.preallocate(fd: fd, size: size, path: dataPath)
        } catch {
            guard error.errno == ENOSPC || error.errno == EDQUOT else { throw error }
            var st = stat()
            let allocated = fstat(fd, &st) == 0 ? Int64(st.st_blocks) * 512 : 0
            throw Failure(message: FreeSpace.notEnoughSpace(folder: cache.directory, entry: download.to,
                                                            need: max(0, size - allocated)), noRoom: true)
        }
    }

    /// Records `good` bytes from 0 as durable. When the cache's file system is too full even
    /// for the record, the last 64 KiB of data are cut off to make room for it: the bytes before
    /// are kept and vouched for, so the next run resumes there. Returns the bytes kept.
    private func keep(good: Int64, head: HTTPResponseHead?, fd: Int32, recorder: EntryRecorder) async throws -> Int64 {
        let recorded = cache.loadState(key)?.good ?? 0
        do {
            try await recorder.checkpoint(good: good, head: head)
            return good
        } catch {
            guard error.errno == ENOSPC || error.errno == EDQUOT else { throw error }
            let kept = max(recorded, (good - (64 << 10)) & ~4095)
            // The flush again: on a file system that allocates late, the failed one may have
            // been the checkpoint's flush, and the record must vouch only for flushed bytes.
            guard kept < good, ftruncate(fd, off_t(kept)) == 0, fdatasync(fd) == 0 else { throw error }
            try await recorder.update {
                $0.ranges = RangeSet(kept > 0 ? [0..<kept] : [])
            }
            return kept
        }
    }

    /// The message for a cache write that failed for lack of space (or a read-only disk).
    private func spaceFailure(_ code: Int32, kept: Int64) -> String {
        let folder = cache.directory
        let reason = String(cString: strerror(code))
        if code == EROFS {
            return "cannot write to the cache in \(folder): \(reason); make it writable (or pass --cache) and run again"
        }
        let free = FreeSpace.available(at: folder).map { ", \(ByteSize.format($0)) free" } ?? ""
        let keptText = kept > 0 ? "\(ByteSize.format(kept)) downloaded so far is kept" : "nothing was kept"
        return "cannot write to the cache in \(folder): \(reason)\(free); \(keptText), free some space and run again to resume"
    }

    /// The message for a finished file that could not be copied beside its destination (the
    /// cache is on another file system); the file stays complete in the cache.
    private func copyFailure(_ error: any Error, folder: String) -> String {
        guard let error = error as? FileError else { return "\(download.to): \(error)" }
        let reason = String(cString: strerror(error.errno))
        switch error.errno {
        case ENOSPC, EDQUOT:
            let free = FreeSpace.available(at: folder).map { " (\(ByteSize.format($0)) free)" } ?? ""
            return "cannot copy the finished file into \(folder): \(reason)\(free); "
                + "the download is complete in the cache and \(download.to) was left as it was: free some space and run again"
        case EROFS:
            return "cannot write into \(folder): \(reason); "
                + "the download is complete in the cache: make the destination writable and run again"
        default:
            return "cannot copy the finished file into place: \(error.description)"
        }
    }

    private func describe(_ error: TransferError, offset: Int64) -> String {
        let kept = offset > 0 ? "; \(ByteSize.format(offset)) kept in the cache, run again to resume" : ""
        switch error {
        case .status(_, let code, _, _) where (400..<500).contains(code) && code != 408 && code != 429:
            return error.description + (code == 401 || code == 403 ? " (check the credentials in headers:)" : "")
        default:
            return error.description + kept
        }
    }
}

/// One entry's hold on a network slot; releasing twice is harmless.
actor Slot {
    private let semaphore: AsyncSemaphore
    private var held = false

    init(semaphore: AsyncSemaphore) {
        self.semaphore = semaphore
    }

    func acquire() async {
        guard !held else { return }
        await semaphore.acquire()
        held = true
    }

    func release() async {
        guard held else { return }
        held = false
        await semaphore.release()
    }
}
