#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// Which of syncr's own temporary names (`.syncr-*`) a run's destination folders hold, read
/// once per folder: a killed run may leave a copy or a staging folder beside a destination, and
/// every entry must remove its own, but almost never is there one. One `readdir` per folder
/// replaces an `unlink` and an `lstat` of absent names per entry.
///
/// The same listing tells which folders did not exist when the run began: their entries need
/// not look for their destinations (`wasMissing`).
///
/// Built fresh for each `apply`, which holds the cache lock: no other run creates these names
/// meanwhile, and each entry asks before it creates its own.
final class LeftoverIndex: Sendable {
    /// The prefix every temporary name syncr puts beside a destination starts with.
    static let prefix = ".syncr-"

    /// What one folder held when it was first listed.
    private struct Listing {
        /// Its `.syncr-` names.
        var names: Set<String> = []
        /// The folder did not exist (`ENOENT`).
        var missing = false
        /// The folder was listed: it is one, and nothing stops a file being made in it.
        var listed = false
        /// What keeps a folder that could not be listed from being made (`FolderObstacles`),
        /// looked at with the listing, once per folder.
        var obstacle: FolderObstacle?
    }

    /// Folder → what it held when it was first asked about.
    private let folders = Locked<[PathKey: Listing]>([:])

    /// Whether `name` was in `folder` when the folder was first listed (this run); false when
    /// the folder could not be read (it does not exist yet: nothing to remove).
    func contains(_ name: String, in folder: String) -> Bool {
        listing(of: folder).names.contains(name)
    }

    /// Whether `folder` held any `.syncr-` name when it was first listed (this run).
    func holdsAny(in folder: String) -> Bool {
        !listing(of: folder).names.isEmpty
    }

    /// Whether `folder` did not exist when it was first listed (this run). Then no destination
    /// in it exists either, and an entry need not look: a fresh run into a new folder saves a
    /// failed `stat` per entry. Only this run's own entries put files there since (each
    /// destination is one entry's alone), and anything another program put there meanwhile is
    /// found when the file is moved into place, as it would be after a look.
    func wasMissing(_ folder: String) -> Bool {
        listing(of: folder).missing
    }

    /// What `folder` was when first listed (this run): missing (see `wasMissing`), a folder,
    /// or neither; and what keeps it from being made, when it was not a folder. One look per
    /// entry tells apply all it needs of the destination's folder.
    func folderFacts(_ folder: String) -> (missing: Bool, listed: Bool, obstacle: FolderObstacle?) {
        let listing = listing(of: folder)
        return (listing.missing, listing.listed, listing.obstacle)
    }

    private func listing(of folder: String) -> Listing {
        let key = PathKey(folder)
        if let listing = folders.withLock({ $0[key] }) { return listing }
        // Listed outside the lock: two entries of one folder may both list it, harmlessly.
        var listing = Self.list(folder)
        if !listing.listed { listing.obstacle = FolderObstacles.look(folder) }
        folders.withLock { $0[key] = listing }
        return listing
    }

    /// The names in `folder` that start with `prefix`; empty when it cannot be read.
    static func temporaryNames(in folder: String) -> Set<String> {
        list(folder).names
    }

    private static func list(_ folder: String) -> Listing {
        guard let dir = opendir(folder) else { return Listing(missing: errno == ENOENT) }
        defer { closedir(dir) }
        var names: Set<String> = []
        while let entry = readdir(dir) {
            // The prefix is checked on the bytes in place: most names are not ours.
            let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let raw = (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: UInt8.self)
            guard strncmp(UnsafeRawPointer(raw).assumingMemoryBound(to: CChar.self), prefix, prefix.utf8.count) == 0
            else { continue }
            names.insert(directoryEntryName(entry))
        }
        return Listing(names: names, listed: true)
    }
}
