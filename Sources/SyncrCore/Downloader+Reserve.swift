#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrHTTP
import SyncrManifest

/// The cache file one download writes into, open for the fetch.
struct CacheFile: Sendable {
    let fd: Int32
    let path: String
    /// Owns the entry's record while the fetch runs.
    let recorder: EntryRecorder
}

/// The reserve stage: the cache file to fetch into, resumed or fresh, and room for it.
extension Downloader {
    /// Opens the cache file: the partial the plan decided to resume, or a fresh file. Returns it
    /// with the offset the fetch starts at.
    func reserve() async throws -> (CacheFile, offset: Int64) {
        let dataPath = cache.dataPath(key)
        var offset: Int64 = 0
        var state = EntryState(url: redactor.scrub(url))
        // Whether the record and its bytes are taken over. Not told by the offset: pieces of a
        // split download may be kept while the one from byte 0 has nothing yet (`good` 0), and
        // truncating their file under a record that vouches for them placed zeros as data.
        var resumed = false
        if item.action == .resume, let saved = cache.loadState(key), saved.good == item.offset {
            state = saved
            offset = saved.good
            resumed = true
        } else if !nothingCached {
            try await cache.discard(key, flusher: flusher)
        }
        // The folder at the destination is syncr's unpack: the new record says so from its
        // start, so that a run cut short, or an unpack that failed, still knows it is syncr's
        // to replace (`keepsForeignFiles`).
        if !resumed, download.unzip, unpackedBefore { state.destination = download.destination }
        // A fresh file is created after the old one was unlinked, so that no other name for the
        // old inode (a destination it was once moved to) can ever be written through.
        let flags = resumed ? (O_RDWR | O_CLOEXEC) : (O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC)
        var fd = open(dataPath, flags, 0o666)
        if fd < 0 && errno == ENOENT {
            // apply made the cache folder when it started; only a folder removed since is
            // made again (a stat per entry otherwise).
            try cache.prepare()
            fd = open(dataPath, flags, 0o666)
        }
        guard fd >= 0 else { throw FileError(path: dataPath, operation: "open", errno: errno) }
        // Only a resumed file keeps its record; any other had it removed above, or had none.
        let recorder = EntryRecorder(state: state, cache: cache, key: key, fd: fd, redactor: redactor,
                                     recordOnDisk: resumed)
        return (CacheFile(fd: fd, path: dataPath, recorder: recorder), offset)
    }

    /// Preallocates the cache file; a file system too full for it stops the entry up front,
    /// before any byte is fetched.
    func preallocate(fd: Int32, size: Int64, dataPath: String, recorder: EntryRecorder) async throws {
        // Measured before: a failed `fallocate` may hold what it got (ext4 does) until the
        // file is cut back, and the numbers after it said "0 B free" and too little needed.
        var st = stat()
        let allocated = fstat(fd, &st) == 0 ? Int64(st.st_blocks) * 512 : 0
        let available = FreeSpace.available(at: cache.directory)
        do {
            try SegmentedFetch.preallocate(fd: fd, size: size, path: dataPath,
                                           inMemoryRoom: cache.memoryBacked ? available : nil)
        } catch {
            guard error.errno == ENOSPC || error.errno == EDQUOT else { throw error }
            throw SyncError.noSpace(path: cache.directory, needed: max(0, size - allocated), available: available,
                                    errno: error.errno, during: .reserve(entry: download.to))
        }
    }

    /// Records `good` bytes from 0 as durable. When the cache's file system is too full even
    /// for the record, the last 64 KiB of data are cut off to make room for it: the bytes before
    /// are kept and vouched for, so the next run resumes there. Returns the bytes kept.
    func keep(good: Int64, head: HTTPResponseHead?, fd: Int32, recorder: EntryRecorder) async throws -> Int64 {
        let recorded = cache.loadState(key)?.good ?? 0
        do {
            try await recorder.checkpoint(good: good, head: head)
            return good
        } catch {
            guard error.errno == ENOSPC || error.errno == EDQUOT else { throw error }
            let kept = max(recorded, (good - (64 << 10)) & ~4095)
            // The flush again: on a file system that allocates late, the failed one may have
            // been the checkpoint's flush, and the record must vouch only for flushed bytes.
            guard kept < good, ftruncate(fd, off_t(kept)) == 0, cache.flush(fd) else { throw error }
            try await recorder.update {
                $0.ranges = RangeSet(kept > 0 ? [0..<kept] : [])
            }
            return kept
        }
    }

    /// The failure of a cache write for lack of space (or a read-only disk), `kept` bytes kept.
    func spaceFailure(_ code: Int32, kept: Int64) -> SyncError {
        let folder = cache.directory
        if code == EROFS { return .readOnly(path: folder, during: .cacheWrite(kept: kept)) }
        return .noSpace(path: folder, needed: nil, available: FreeSpace.available(at: folder), errno: code,
                        during: .cacheWrite(kept: kept))
    }
}
