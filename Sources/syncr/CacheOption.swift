#if canImport(Glibc)
import Glibc
#endif
import SyncrManifest

/// `--cache DIR` naming a path where no folder can be: a command-line mistake, refused (exit 64)
/// by every command that takes it before it reads a manifest or sends a request. Left to the
/// cache, a file there was listed as a missing cache and then failed to list (`cache`), failed
/// apply with exit 1 after the plan, and was taken by `plan` for an empty cache.
enum CacheOption {
    /// Prints the error for a `--cache` path that cannot be a folder.
    /// - Returns: the exit code to end with, or nil when the path is, or can be made, a folder.
    static func refuse(_ path: String?) -> Int32? {
        guard let path, let problem = problem(path) else { return nil }
        Output.err("syncr: error: --cache \(Rendering.printable(path)): \(problem); name a folder for the cache "
            + "(one that is not there yet is made)")
        return ExitCode.usage
    }

    /// Prints the error for a `--cache` folder that cannot be the cache of `manifest` (its own
    /// folder, or one above it), as the manifest's `cache:` would be refused.
    /// - Returns: the exit code to end with, or nil when the folder may be the cache.
    static func refuse(_ path: String, for manifest: Manifest) -> Int32? {
        guard let problem = manifest.cacheFolderProblem(path) else { return nil }
        Output.err("syncr: error: --cache \(Rendering.printable(path)): \(problem) (e.g. --cache .syncr-cache)")
        return ExitCode.usage
    }

    /// What stands where the folder goes, as the middle of "--cache PATH: ...; name a folder";
    /// nil when `path` is a folder or nothing is there yet (it is made), and when it cannot be
    /// told (no permission: the cache's own error names that).
    static func problem(_ given: String) -> String? {
        // `notes.txt/` is the file itself, not a file above it.
        var path = Substring(given)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return problem(at: String(path))
    }

    private static func problem(at path: String) -> String? {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT != S_IFDIR else { return nil }
            return isLink(path) ? "it is a symbolic link to a file, not a folder" : "it is a file, not a folder"
        }
        switch errno {
        // mkdir does not follow a link to nothing, so the folder could never be made there.
        case ENOENT where isLink(path): return "it is a symbolic link to nothing"
        case ENOTDIR: return fileAbove(path).map { "\(Rendering.printable($0)), above it, is a file, not a folder" }
        default: return nil
        }
    }

    private static func isLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    /// The nearest path above `path` that is there and is not a folder (`notes.txt` for
    /// `notes.txt/sub/cache`).
    private static func fileAbove(_ path: String) -> String? {
        var current = Substring(path)
        while let slash = current.lastIndex(of: "/"), slash != current.startIndex {
            current = current[..<slash]
            var st = stat()
            if stat(String(current), &st) == 0 { return st.st_mode & S_IFMT == S_IFDIR ? nil : String(current) }
        }
        return nil
    }
}
