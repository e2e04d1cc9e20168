#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrHTTP
import SyncrManifest

/// The verify stage: the finished cache file is trimmed to its size, made durable, and checked
/// against the manifest's checksums (and, in a locked run, the lock) before anything points at it.
extension Downloader {
    /// In a locked run, holds the answers that brought the bytes against the lock, as the plan
    /// held the server's answer to its question: a file replaced between the two requests, or
    /// a CDN whose nodes serve two versions, would otherwise be put in place, and a lock without
    /// a SHA-256 (what `syncr lock` writes by default) checks nothing else. The bytes are no
    /// version the lock knows: they are dropped, and the destination stays as it was.
    func checkLock(_ recorder: EntryRecorder) async throws {
        guard let locked else { return }
        let state = await recorder.state
        let answer = RemoteResource(size: state.size, etag: state.etag, lastModified: state.lastModified,
                                    acceptsRanges: false, finalURL: "", method: "GET")
        // Where the answer came from is not held against it: mirrors and CDNs serve one URL
        // from many places, and the plan checked where the URL leads.
        guard let change = LockCheck.drift(locked.entry, answer) else { return }
        try? cache.discard(key)
        let said = change + " in the answer to the download, where the plan's question was answered with the locked "
            + "version: the file changed meanwhile, or the server serves two versions"
        throw SyncError.lockedVersionChanged(lockfile: locked.lockfile, change: redactor.scrub(said))
    }

    /// Trims anything beyond the end (left by an older, longer attempt) and flushes the bytes
    /// (unless `fsync: false`). Returns the file's size and fingerprint, which nothing changes
    /// from here on (a flush leaves the modification time), so `promote` need not look again.
    func settle(_ file: CacheFile, offset: Int64) async throws -> (size: Int64, fingerprint: FileFingerprint?) {
        let finalSize = await file.recorder.state.size ?? offset
        var fingerprint = FS.fingerprint(fd: file.fd)
        if let found = fingerprint, found.size != finalSize {
            guard ftruncate(file.fd, off_t(finalSize)) == 0 else {
                throw FileError(path: file.path, operation: "trim", errno: errno)
            }
            fingerprint = FS.fingerprint(fd: file.fd)
        }
        if cache.flushesFiles {
            await yieldTurn()
            try await flusher.flush(fd: file.fd, path: file.path)
        }
        return (finalSize, fingerprint)
    }

    func verify(dataPath: String) async throws {
        guard !download.checksums.isEmpty else { return }
        let algorithms = download.checksums.map(\.algorithm)
        await yieldTurn()
        let actual = try await BlockingIO.run { try FS.digests(of: dataPath, algorithms: algorithms) }
        for expected in download.checksums where actual[expected.algorithm] != expected.hex {
            // Where the record cannot be ended, the data stays as the record describes it.
            try? cache.discard(key)
            throw SyncError.checksumMismatch(url: url, algorithm: expected.algorithm, expected: expected.hex,
                                             actual: actual[expected.algorithm], destination: download.to)
        }
    }
}
