#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock

/// What stands where a destination's folder must be made: a file, or a symbolic link to a file
/// or to nothing, at the folder's path or above it. `plan` and `apply` look before they ask the
/// entry's server, so that apply fails such an entry before its download; one made after the
/// look is found when the folder is made (`FS.makeDirectories`).
public struct FolderObstacle: Sendable, Equatable, Error {
    /// The path that is not a folder.
    public let path: String
    /// What it is, as `FS.inTheWay` names it ("a file is in the way").
    public let what: String
}

/// The obstacles of a run's destination folders, each folder looked at once per plan or apply:
/// 2,000 entries in one folder cost one `stat`, not 2,000.
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

    /// What keeps `folder` from being made, looked at now; nil when it is a folder or can be made.
    static func look(_ folder: String) -> FolderObstacle? {
        if case .failure(let obstacle) = nearest(folder) { return obstacle }
        return nil
    }

    /// Walks up from `folder` to the first path that exists: a folder there means every missing
    /// one below can be made; anything else is the obstacle.
    /// - Returns: that folder (nil when no folder of a relative path exists: the current folder
    ///   is the one), or the obstacle.
    static func nearest(_ folder: String) -> Result<String?, FolderObstacle> {
        var path = folder
        while true {
            if FS.isFolder(path) { return .success(path) }
            var st = stat()
            // It exists (lstat: a link to nothing exists too) and is no folder.
            if lstat(path, &st) == 0 { return .failure(FolderObstacle(path: path, what: FS.inTheWay(path))) }
            let parent = FS.parentFolder(path)
            guard !parent.isEmpty, parent != path else { return .success(nil) }
            path = parent
        }
    }
}

/// What the executable asks about a folder that a run will write into (a report's), before the
/// run: the walk and words `plan` uses for destinations, and what `access()` cannot tell root.
public enum FolderFacts {
    /// The folder a missing `folder` would be made in (`folder` itself when it is there; nil for
    /// the current folder), or what stands in the way, as `plan` names it.
    public static func nearest(_ folder: String) -> Result<String?, FolderObstacle> {
        FolderObstacles.nearest(folder)
    }

    /// The kind of pseudo file system `folder` is on (`proc`, `sysfs`...), where no file can be
    /// made, not even by root, whom `access()` allows to write anywhere; nil for any other.
    public static func pseudoFileSystem(_ folder: String) -> String? {
        FS.pseudoFileSystem(folder)
    }
}
