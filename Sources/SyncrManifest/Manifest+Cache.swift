#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// A cache folder that is the manifest's own folder, or a folder above it (`cache: .`): syncr's
/// files (`records.journal`, `syncr.lock`, a `<key>.data` per entry) then lay among the
/// downloads, and the cache's `syncr.lock` was where `syncr lock` writes the lockfile of
/// `syncr.yml`, so every `syncr lock` failed and every `plan --locked` said to run it.
enum CacheAroundManifest {
    /// What is wrong with `cache` (absolute, normalized) as the cache of a manifest in
    /// `directory`, as the end of "CACHE: ..."; nil when nothing is. Compared as written, then,
    /// when both are there, as the system resolves them (a link to the manifest's folder).
    static func problem(_ cache: String, directory: String) -> String? {
        var own = cache == directory
        var above = !own && LexicalPath.isSelfOrAncestor(cache, of: directory)
        if !own, !above, let real = realPath(cache), let realDirectory = realPath(directory) {
            own = real == realDirectory
            above = !own && LexicalPath.isSelfOrAncestor(real, of: realDirectory)
        }
        guard own || above else { return nil }
        let files = "syncr's own files (records.journal, syncr.lock, the data of each entry) would lie among the downloads"
        return own ? "it is the manifest's own folder: \(files), and the cache's lock where 'syncr lock' writes the lockfile; "
            + "give the cache a folder of its own" : "it holds the manifest's folder: \(files); give the cache a folder of its own"
    }

    /// `realpath(3)` of `path`, nil when it is not there (or cannot be resolved).
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension Manifest {
    /// What keeps a cache folder given on the command line (`--cache DIR`, absolute or
    /// relative to the current folder) from being this manifest's cache: being the manifest's
    /// folder or one above it, refused in `cache:` as the manifest is read. Nil when nothing does.
    public func cacheFolderProblem(_ cache: String) -> String? {
        CacheAroundManifest.problem(Self.resolvedPath(cache), directory: directory)
    }

    /// The downloads that a cache folder given on the command line (`--cache DIR`, absolute or
    /// relative to the current folder) would clash with: a destination inside it, or an unpacked
    /// folder holding it. The manifest's own `cache:` was checked when it was read; a folder
    /// that is the manifest's or above it holds every destination, and is refused on its own
    /// (`cacheFolderProblem`).
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
