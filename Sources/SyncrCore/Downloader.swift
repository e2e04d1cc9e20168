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
    /// Carries every request of the entry (the run's `TransferEngine`, or a test's stand-in).
    let engine: any Transport
    let redactor: Redactor
    let reporter: (any ProgressReporter)?
    /// Flushes finished files, many at once, off the cooperative pool.
    let flusher: FlushPool
    /// Folders to flush once at the end of the run.
    let folders: ChangedFolders
    /// Network slots (`jobs`): held while fetching, given back before the finished file is
    /// flushed and moved, so that the next files download meanwhile.
    let slots: AsyncSemaphore
    /// The worker's turn (`Session.turns`): given back (`yieldTurn`) before a slow last step (a
    /// flush, a hash, an unpack, a copy), for another worker to take the next entry meanwhile.
    /// A small file's quick last steps keep it, and its worker takes the next entry at once.
    let turn: Slot
    /// The run's servers that nobody answered for; nil: each entry retries on its own.
    var unreachable: UnreachableHosts?
    /// The entry's cache key (`Cache.key(for:)` of the download).
    let key: String
    /// Every request of this entry is built by this one builder, made once: made at each use, it
    /// parsed the URL and copied the settings four to six times per entry.
    let requests: RequestBuilder
    /// The plan found neither a record nor data in the cache for this entry, so there is
    /// nothing to remove before a fresh download.
    var nothingCached = false
    /// The run's listing of `.syncr-` names in destination folders; nil: look for this entry's
    /// leftovers by name.
    var leftovers: LeftoverIndex?
    /// How often progress is made durable while bytes flow.
    var checkpointInterval: Duration = EntryRecorder.interval
    /// In a locked run (`--locked`), the entry's line of the lock and the lockfile's name: the
    /// answer that brings the bytes must be the version it pins (`checkLock`).
    var locked: (entry: LockedEntry, lockfile: String)?
    /// For an `unzip:` entry: the record says syncr unpacked the folder at the destination (its
    /// `destination`, kept by every record of the entry since). Without it, a folder there is
    /// someone else's (`keepsForeignFiles`).
    var unpackedBefore = false

    var url: String { download.url.written }
    /// The folder the destination is in.
    var parent: String { FS.parentFolder(download.destination) }
    /// Beside the destination, named by the entry's key: the copy made when the cache is on
    /// another file system, and the folder an archive is unpacked into before the swap.
    var copyPath: String { parent + "/" + copyName }
    var stagingPath: String { parent + "/" + stagingName }
    /// Their names, each starting with `LeftoverIndex.prefix`.
    var copyName: String { LeftoverIndex.prefix + key + ".tmp" }
    var stagingName: String { LeftoverIndex.prefix + "unpack-" + key }

    func run() async -> ItemResult {
        let clock = ContinuousClock()
        // Reset when the entry gets its network slot: its time is its transfer's, not its wait's.
        var start = clock.now
        let fs = FetchState(offset: 0)
        var finalSize: Int64?
        func result(_ outcome: ItemResult.Outcome) -> ItemResult {
            let elapsed = clock.now - start
            // One that never started took no time: its wait for a slot is not its own.
            let seconds = outcome == .interrupted(.beforeStart) ? 0
                : Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            var item = self.item
            if item.action == .resume, fs.startedOver {
                // The cached part was dropped: what was done is a restart from byte 0, and the
                // summary counts it so, not as a resume.
                item.action = .restart
                item.offset = 0
                item.bytes = item.size
            }
            if item.size == nil, let finalSize = finalSize ?? fs.size {
                // Fetched without asking first: the answer told the size.
                item.size = finalSize
                item.bytes = finalSize - item.offset
            }
            return ItemResult(item: item, outcome: outcome.scrubbed(redactor), transferred: fs.transferred,
                              seconds: seconds, notes: fs.notes.map { $0.scrubbed(redactor) })
        }
        removeLeftovers()
        switch item.action {
        case .error:
            // A probe cut short by the interruption (its retries too) says nothing about the server.
            if case .interrupted? = item.error { return result(.interrupted(interruption(fs))) }
            if Task.isCancelled { return result(.interrupted(interruption(fs))) }
            return result(.failed(item.error ?? .other(message: item.reason)))
        case .skip:
            recordVerifiedDestination()
            return result(.skipped)
        case .upload:
            return result(.failed(.other(message: "an upload item reached the downloader")))
        case .download, .restart, .resume:
            break
        }
        // An entry not started when the run was interrupted does not start.
        if Task.isCancelled { return result(.interrupted(.beforeStart)) }
        // What the record vouched for before this run, to count what an interrupted run added
        // (pieces fetched in parallel are known only from the record once they were stopped).
        let keptBefore = item.action == .resume ? cache.loadState(key)?.cachedBytes ?? 0 : 0
        func interrupted() -> ItemResult {
            let state = cache.loadState(key)
            fs.transferred = max(fs.transferred, (state?.cachedBytes ?? 0) - keptBefore)
            // Fetched without asking first: the size the answer told is in the record (the
            // report counted the entry as of unknown size).
            if finalSize == nil { finalSize = state?.size }
            return result(.interrupted(interruption(fs)))
        }
        let slot = Slot(semaphore: slots)
        let outcome: ItemResult
        var began = false
        do {
            finalSize = try await transfer(fs, slot: slot) {
                // Said once the entry has its slot: a line per queued entry at the start (and
                // their times counting the queue) told of transfers that had not begun.
                start = clock.now
                began = true
                reporter?.report(.started(item: item))
            }
            outcome = result(.ok)
        } catch is Interrupted {
            // Stopped while it waited for a network slot: it never started.
            outcome = began ? interrupted() : result(.interrupted(.beforeStart))
        } catch is CancellationError {
            outcome = began ? interrupted() : result(.interrupted(.beforeStart))
        } catch let error as SyncError {
            // Pieces fetched in parallel that were kept are known only from the record.
            fs.transferred = max(fs.transferred, (cache.loadState(key)?.cachedBytes ?? 0) - keptBefore)
            outcome = result(.failed(error))
        } catch let error as FileError {
            // A record or cache file the full disk refused (the records journal) is said as a
            // full disk, with its code, like the data's own writes.
            if Self.isSpaceError(error.errno), error.path.hasPrefix(cache.directory + "/") {
                outcome = result(.failed(spaceFailure(error.errno, kept: cache.loadState(key)?.cachedBytes ?? 0)))
            } else {
                outcome = result(.failed(.file(error)))
            }
        } catch {
            outcome = result(.failed(.other(message: "\(error)")))
        }
        // A transfer that failed still holds its slot (one that finished gave it back already).
        await slot.release()
        if case .failed = outcome.outcome {
            keepFolderOwned()
            removeEmptyData()
        }
        return outcome
    }

    /// A failed `unzip:` entry whose folder syncr unpacked keeps a record that says so, also
    /// where the failure left none (a small archive's record is first written once it is in
    /// place; a checksum mismatch, a corrupt archive or another locked version drop it):
    /// without one, the next run took syncr's own folder for someone else's, and refused to
    /// replace it once a new version lacked a file of the old. The record vouches for no bytes,
    /// so the data it would sit beside goes.
    private func keepFolderOwned() {
        guard download.unzip, unpackedBefore, cache.loadState(key) == nil else { return }
        var state = EntryState(url: redactor.scrub(url))
        state.destination = download.destination
        FS.remove(cache.dataPath(key))
        try? cache.saveState(state, key: key, durable: false)
    }

    /// A failed entry whose cache file holds nothing, and that no record names, leaves no file
    /// behind: every 404 and refused connection left an empty one, which `syncr cache` listed
    /// as an entry of unknown state.
    private func removeEmptyData() {
        let path = cache.dataPath(key)
        guard FS.fileSize(path) == 0, cache.loadState(key) == nil else { return }
        FS.remove(path)
    }

    /// What a run killed mid-way leaves beside the destination goes, whatever this run does
    /// with the entry: one that is up to date from now on would otherwise keep it for good.
    /// `apply` holds the cache lock, so no other run is writing these names.
    private func removeLeftovers() {
        let folder = parent
        // Almost every folder holds none: then no name need be made.
        guard leftovers?.holdsAny(in: folder) ?? true else { return }
        if leftovers?.contains(copyName, in: folder) ?? true { FS.remove(folder + "/" + copyName) }
        if leftovers?.contains(stagingName, in: folder) ?? true { FolderReplace.removeTree(folder + "/" + stagingName) }
        // The old folder, moved aside where the file system cannot swap two folders in one step
        // (`FolderReplace.replace`), by a run killed before it was removed. Killed between the
        // two renames, that run left no folder in place: the old one goes back, so that this
        // run, should it fail too, leaves it as it was; the unpack then replaces it as usual.
        let aside = stagingName + FolderReplace.asideSuffix
        if leftovers?.contains(aside, in: folder) ?? true {
            let asidePath = folder + "/" + aside
            if download.unzip, FS.kind(download.destination) == .missing, rename(asidePath, download.destination) == 0 { return }
            FolderReplace.removeTree(asidePath)
        }
    }

    /// What an interrupted entry kept, from its record on disk: what the next run resumes from.
    private func interruption(_ fs: FetchState) -> SyncError.Interruption {
        guard let state = cache.loadState(key), state.cachedBytes > 0 else { return .download(kept: 0, size: nil) }
        // A complete record whose data is still in the cache (stopped in its verify, before it
        // was placed) kept it all; one whose data went into place kept nothing here.
        if state.complete, FS.fileSize(cache.dataPath(key)) == nil { return .download(kept: 0, size: nil) }
        return .download(kept: state.cachedBytes, size: state.size, resumes: resumes(state, fs))
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
        // Without a flush of its own: a record lost to a power cut costs one more hash.
        _ = try? cache.save(state, key: key, durable: false, stateFile: true)
    }

    /// The stages of a download that transfers, in order: reserve the cache file, fetch the
    /// missing bytes (holding a network slot), make them durable and check them, and put the
    /// file in place. Returns the size of the file now in place.
    /// - Parameter began: called once the slot is held and the transfer begins.
    private func transfer(_ fs: FetchState, slot: Slot, began: () -> Void) async throws -> Int64 {
        await slot.acquire()
        // Checked before anything in the cache is touched: a cancelled entry keeps its partial.
        if Task.isCancelled { throw Interrupted() }
        began()
        let (file, offset) = try await reserve()
        defer { close(file.fd) }
        fs.offset = offset
        try await fetch(file, fs)
        // The next files download while this one is flushed and moved.
        await slot.release()
        try await checkLock(file.recorder)
        let (size, fingerprint) = try await settle(file, offset: fs.offset)
        try await verify(dataPath: file.path)
        await file.recorder.remember(0..<size, head: nil)
        if let said = try await place(dataPath: file.path, size: size, fingerprint: fingerprint, recorder: file.recorder) {
            note(fs, said)
        }
        return size
    }

    /// Gives the worker's turn back ahead of a slow step, so that another worker takes the next
    /// entry meanwhile; this one takes a turn again before its next entry.
    func yieldTurn() async {
        await turn.release()
    }

    /// Every attempt of this entry is retried by one loop.
    var retrying: Retrying {
        var retrying = Retrying(retries: download.settings.retries, index: item.index, kind: .download,
                                reporter: reporter, redactor: redactor)
        retrying.object = download.object
        retrying.s3 = requests.s3
        retrying.credentials = requests.credentials
        retrying.unreachable = unreachable.map { ($0, requests.url, url) }
        return retrying
    }
}

/// A hold on one permit of a semaphore (an entry's network slot, a worker's turn); taking it
/// when held, or giving it back when not, is harmless.
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
