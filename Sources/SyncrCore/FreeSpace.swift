#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrManifest

/// Whether the downloads of a plan fit on the file systems they are written to.
///
/// A download is written twice in the worst case: into the cache (preallocated to its full
/// size), and, when the cache is on another file system than the destination, copied beside
/// the destination before the rename. Bytes are summed per file system (by device number), so
/// a cache and destinations on one disk count once.
public enum FreeSpace {
    /// One file system's free space, as `statvfs` tells it for a folder on it.
    public struct Volume: Sendable, Equatable {
        /// `st_dev` of the folder: equal for folders on the same file system.
        public var device: UInt64
        /// A folder on it, for messages (the first one seen).
        public var folder: String
        /// Bytes an unprivileged writer may still use (`f_bavail * f_frsize`).
        public var available: Int64

        /// Creates a volume from its parts.
        public init(device: UInt64, folder: String, available: Int64) {
            self.device = device
            self.folder = folder
            self.available = available
        }
    }

    /// Bytes one download still has to write on one file system.
    public struct Need: Sendable, Equatable {
        /// The file system the bytes go to.
        public var volume: Volume
        /// Bytes still to be written there: the uncached rest in the cache, the whole file for a copy
        /// beside the destination.
        public var bytes: Int64

        /// Creates a need from its parts.
        public init(volume: Volume, bytes: Int64) {
            self.volume = volume
            self.bytes = bytes
        }
    }

    /// The file system holding `path`, or the nearest existing folder above it (a destination
    /// folder that apply will create). Nil when nothing can be asked (e.g. no such root).
    public static func volume(for path: String) -> Volume? {
        var folder = path.isEmpty ? "." : path
        while true {
            var st = stat()
            var vfs = statvfs()
            if stat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, statvfs(folder, &vfs) == 0 {
                let available = Int64(clamping: UInt64(vfs.f_bavail) &* UInt64(vfs.f_frsize))
                return Volume(device: UInt64(st.st_dev), folder: folder, available: available)
            }
            let parent = FS.parentFolder(folder)
            if parent.isEmpty || parent == folder { return nil }
            folder = parent
        }
    }

    /// Bytes free on the file system holding `path`, nil when it cannot be asked.
    public static func available(at path: String) -> Int64? {
        volume(for: path)?.available
    }

    /// One warning per file system whose needs exceed what is free, e.g. "downloads need
    /// 1.2 GiB in /cache but 300 MiB is free". Pure: the volumes come with the needs.
    public static func warnings(for needs: [Need]) -> [PlanWarning] {
        var order: [UInt64] = []
        var totals: [UInt64: (volume: Volume, bytes: Int64)] = [:]
        for need in needs where need.bytes > 0 {
            if let existing = totals[need.volume.device] {
                totals[need.volume.device] = (existing.volume, existing.bytes.clampedAdding(need.bytes))
            } else {
                order.append(need.volume.device)
                totals[need.volume.device] = (need.volume, need.bytes)
            }
        }
        return order.compactMap { device in
            guard let (volume, bytes) = totals[device], bytes > volume.available else { return nil }
            return .notEnoughSpace(folder: volume.folder, needed: bytes, available: volume.available)
        }
    }

    /// What one planned download still writes: the rest of the cache file (preallocated in
    /// full, so `size` minus what the cache file already holds), and, when the destination is
    /// on another file system, a copy of the whole file beside it.
    /// - Parameters:
    ///   - size: the file's size; nil (unknown) needs nothing that can be counted.
    ///   - cached: bytes the cache file already occupies.
    ///   - unpacked: the archive is unpacked: the folder needs about `size` again (a guess:
    ///     the unpacked size is not known before unpacking).
    public static func needs(size: Int64?, cached: Int64, cache: Volume, destination: Volume,
                             unpacked: Bool) -> [Need] {
        guard let size, size > 0 else { return [] }
        var result = [Need(volume: cache, bytes: max(0, size - cached))]
        if unpacked || cache.device != destination.device {
            result.append(Need(volume: destination, bytes: size))
        }
        return result
    }
}

extension Session {
    /// Free-space warnings for planned items whose sizes are known.
    /// - Parameter entries: what the items were planned from, item for item: an object listed
    ///   under an `s3://` prefix is an entry of its own (its cache key, its destination), which
    ///   the manifest's prefix entry is not.
    func spaceWarnings(_ items: [PlanItem], entries: Entries) -> [PlanWarning] {
        // Nothing to fetch (a no-op run): no entry need be made.
        guard items.contains(where: { $0.kind == .download && [.download, .resume, .restart].contains($0.action) }) else {
            return []
        }
        var needs: [FreeSpace.Need] = []
        var volumes = VolumeLookup()
        for (item, entry) in zip(items, entries) {
            guard case .download(let download) = entry, [.download, .resume, .restart].contains(item.action),
                  let size = item.size else { continue }
            let cached = item.action == .resume ? allocated(Cache.key(for: download)) ?? 0 : 0
            needs += spaceNeeds(download, size: size, cached: min(size, cached), volumes: &volumes)
        }
        return FreeSpace.warnings(for: needs)
    }

    /// What `plan` would warn about, for the start of apply, which asks no server first: a
    /// netrc file that cannot be read, and free space for the downloads whose size a cache
    /// record tells.
    public func applyWarnings() -> [PlanWarning] {
        [NetrcSecrets.warning(for: manifest)].compactMap { $0 } + applySpaceWarnings()
    }

    /// Free-space warnings at the start of apply: only the downloads whose size a cache record
    /// tells are counted.
    func applySpaceWarnings() -> [PlanWarning] {
        var needs: [FreeSpace.Need] = []
        var volumes = VolumeLookup()
        let index = CacheIndex(directory: cache.directory)
        // Most runs find no partial download at all: then no entry's key need be computed.
        guard index.mayHoldData else { return [] }
        for download in manifest.downloads {
            // Only a partial download has a size to plan for, and a partial has a cache file:
            // the listing, then a stat, spare the record read of every entry that is complete
            // or not begun.
            let key = Cache.key(for: download)
            guard index.mayHave(key).data, let allocated = allocated(key), let state = cache.loadState(key), !state.complete,
                  let size = state.size else { continue }
            needs += spaceNeeds(download, size: size, cached: min(size, allocated), volumes: &volumes)
        }
        return FreeSpace.warnings(for: needs)
    }

    /// Each folder's file system, looked up once per plan: the cache is every entry's, and a
    /// folder holds many destinations (2,000 downloads into one folder asked 4,000 times,
    /// a `stat` and a `statvfs` of each folder and its missing parents, 15% of a plan's CPU).
    struct VolumeLookup {
        private var known: [String: FreeSpace.Volume?] = [:]

        mutating func volume(for folder: String) -> FreeSpace.Volume? {
            if let volume = known[folder] { return volume }
            let volume = FreeSpace.volume(for: folder)
            known[folder] = volume
            return volume
        }
    }

    private func spaceNeeds(_ download: Download, size: Int64, cached: Int64,
                            volumes: inout VolumeLookup) -> [FreeSpace.Need] {
        guard let cacheVolume = volumes.volume(for: cache.directory),
              let destinationVolume = volumes.volume(for: FS.parentFolder(download.destination))
        else { return [] }
        return FreeSpace.needs(size: size, cached: cached, cache: cacheVolume, destination: destinationVolume,
                               unpacked: download.unzip)
    }

    /// Bytes the entry's cache file occupies on disk (preallocated blocks count); nil when it
    /// has none.
    private func allocated(_ key: String) -> Int64? {
        var st = stat()
        guard stat(cache.dataPath(key), &st) == 0 else { return nil }
        return Int64(st.st_blocks) * 512
    }
}
