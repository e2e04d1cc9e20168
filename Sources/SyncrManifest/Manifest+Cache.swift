/// How a destination clashes with syncr's cache folder: the one rule for the manifest's
/// `cache:` (checked as the manifest is read) and a `--cache` folder (`Manifest.downloads(
/// clashingWithCache:)`).
enum CacheClash {
    /// The destination lies in the cache folder (or is it).
    case inside
    /// The destination is a folder that holds the cache: one unpacked into it would replace
    /// the cache, and a file cannot be written where the cache's folders are.
    case holds

    /// The cache folder to hold destinations to, absolute and normalized; nil for one that is
    /// the manifest's folder or above it, which holds every destination.
    static func checkedFolder(_ cache: String, directory: String) -> String? {
        LexicalPath.isSelfOrAncestor(cache, of: directory) ? nil : cache
    }

    /// The clash of `destination` (absolute, normalized) with `cache`, if any. `unpacked` says
    /// which words a message uses; both kinds clash alike.
    static func of(_ destination: String, unpacked: Bool, cache: String) -> CacheClash? {
        if destination == cache || LexicalPath.isStrictlyInside(normalized: destination, folder: cache) { return .inside }
        if LexicalPath.isStrictlyInside(normalized: cache, folder: destination) { return .holds }
        return nil
    }
}

extension Manifest {
    /// The downloads that a cache folder given on the command line (`--cache DIR`, absolute or
    /// relative to the current folder) would clash with: a destination inside it, or an unpacked
    /// folder holding it. The manifest's own `cache:` was checked when it was read; a folder
    /// that is the manifest's or above it holds every destination and is not checked.
    public func downloads(clashingWithCache cache: String) -> [Download] {
        guard let folder = CacheClash.checkedFolder(LexicalPath.resolve(cache, against: FileBytes.currentDirectory()),
                                                    directory: directory) else { return [] }
        return downloads.filter { CacheClash.of($0.destination, unpacked: $0.unzip, cache: folder) != nil }
    }
}

extension Manifest {
    /// The first download that writes `path` (absolute, or relative to the current folder):
    /// its file, or a file inside its folder (unpacked, or mirrored from an `s3://` prefix).
    /// A report written there would replace the download, or change the folder, so that the
    /// next run fetched it again.
    public func download(writing path: String) -> Download? {
        let resolved = Self.resolvedPath(path)
        return downloads.first {
            $0.destination == resolved || LexicalPath.isStrictlyInside(normalized: resolved, folder: $0.destination)
        }
    }

    /// The first upload that reads `path` (absolute, or relative to the current folder): its
    /// file, or a file inside its folder. A report written there would replace what it sends
    /// (the file removed at the start, the report sent in its place next time), or go with it.
    public func upload(reading path: String) -> Upload? {
        let resolved = Self.resolvedPath(path)
        return uploads.first {
            $0.source == resolved || LexicalPath.isStrictlyInside(normalized: resolved, folder: $0.source)
        }
    }

    /// Whether `path` (absolute, or relative to the current folder) is `folder` (absolute,
    /// normalized) or lies inside it, as paths are compared here: lexically.
    public static func path(_ path: String, isIn folder: String) -> Bool {
        let resolved = resolvedPath(path)
        return resolved == folder || LexicalPath.isStrictlyInside(normalized: resolved, folder: folder)
    }

    /// `path` made absolute against the current folder and normalized as destinations are
    /// (lexically: `.`, `..` and repeated slashes resolved, links not followed).
    public static func resolvedPath(_ path: String) -> String {
        LexicalPath.resolve(path, against: FileBytes.currentDirectory())
    }
}
