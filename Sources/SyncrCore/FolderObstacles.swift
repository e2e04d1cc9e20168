#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock

/// What stands where a destination's folder must be made: a file, or a symbolic link to a file
/// or to nothing, at the folder's path or above it. `apply` fails such an entry when it makes
/// the folder (`FS.makeDirectories`); `plan` says so beforehand.
struct FolderObstacle: Sendable, Equatable {
    /// The path that is not a folder.
    let path: String
    /// What it is, as `FS.inTheWay` names it ("a file is in the way").
    let what: String
}

/// The obstacles of a plan's destination folders, each folder looked at once per plan: 2,000
/// entries in one folder cost one `stat`, not 2,000.
final class FolderObstacles: Sendable {
    private let found = Locked<[PathKey: FolderObstacle?]>([:])

    init() {}

    /// What keeps `folder` from being made; nil when it is a folder or can be made.
    func obstacle(for folder: String) -> FolderObstacle? {
        let key = PathKey(folder)
        if let known = found.withLock({ $0[key] }) { return known }
        // Looked at outside the lock: two entries of one folder may both look, harmlessly.
        let obstacle = Self.look(folder)
        found.withLock { $0[key] = obstacle }
        return obstacle
    }

    /// Walks up from `folder` to the first path that exists: a folder there means every missing
    /// one below can be made; anything else is the obstacle.
    static func look(_ folder: String) -> FolderObstacle? {
        var path = folder
        while true {
            if FS.isFolder(path) { return nil }
            var st = stat()
            // It exists (lstat: a link to nothing exists too) and is no folder.
            if lstat(path, &st) == 0 { return FolderObstacle(path: path, what: FS.inTheWay(path)) }
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { return nil }
            path = parent
        }
    }
}
