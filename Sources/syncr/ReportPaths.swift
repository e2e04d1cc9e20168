#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// Where `--report` and `--junit` may not be written, checked once the manifest is read and
/// before anything moves: a report there would destroy what syncr keeps or sends, or could not
/// be written at all, which a long run would find only at its end.
enum ReportPaths {
    /// Why `path` cannot take a report and what to do, as the end of "FLAG PATH: ..."; nil when
    /// it can.
    /// - Parameter cache: the run's cache folder (absolute, normalized).
    static func problem(_ path: String, manifest: Manifest, cache: String) -> String? {
        // Looked at first: below a file, the path is no download's or upload's whatever it
        // names (`small.txt/r.json` under an upload's small.txt), and nothing can go there.
        let folder = parentFolder(path)
        let nearest: String
        switch FolderFacts.nearest(folder) {
        case .failure(let obstacle):
            return "its folder cannot be made (\(Rendering.printable(obstacle.path)): \(obstacle.what)); "
                + "give the report a path in a folder"
        case .success(let found): nearest = found ?? "."
        }
        if let download = manifest.download(writing: path) {
            return "downloads[\(download.index)] (\(Rendering.printable(download.to))) writes there; give the report a file of its own"
        }
        // Removed at the start, then written where the file to send was: the next run sends it.
        if let upload = manifest.upload(reading: path) {
            return "uploads[\(upload.index)] (\(Rendering.printable(upload.from))) reads it; give the report a file of its own"
        }
        if inCache(path, manifest: manifest, cache: cache) {
            return "it is in syncr's cache folder (\(Rendering.printable(cache))), whose records, data and lock it would replace; give the report a file outside it"
        }
        // The path is taken as given, like any file argument. A missing folder is made when the
        // report is written (a run's downloads may make it first).
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { return "it is a folder; name a file in it" }
        // The folder, or the one its missing folders would be made in.
        let what = nearest == folder ? "its folder \(Rendering.printable(folder)) cannot be written"
            : "its folder cannot be made in \(Rendering.printable(nearest))"
        if access(nearest, W_OK) != 0 { return "\(what) (\(String(cString: strerror(errno))))" }
        // access() lets root write anywhere; the kernel's own file systems still take no file.
        if let kind = FolderFacts.pseudoFileSystem(nearest) {
            return "\(what) (it is on \(kind), which holds no files); give the report a path on a disk"
        }
        return nil
    }

    /// Whether `path` is a file of the cache: anything in a cache folder of its own; in a cache
    /// that holds the manifest's folder (`cache: .`), only the names the cache gives its files
    /// (its journal, its lock, and `<key>.<kind>` for a 32-digit key, hidden or not).
    private static func inCache(_ path: String, manifest: Manifest, cache: String) -> Bool {
        guard Manifest.path(path, isIn: cache) else { return false }
        guard Manifest.path(manifest.directory, isIn: cache) else { return true }
        let resolved = Manifest.resolvedPath(path)
        guard parentFolder(resolved) == cache else { return false }
        var name = Substring(resolved[resolved.index(after: resolved.lastIndex(of: "/")!)...])
        if name == "records.journal" || name.hasPrefix("records.journal.") || name == "syncr.lock" { return true }
        if name.hasPrefix(".") { name = name.dropFirst() }
        let key = name.prefix { $0.isHexDigit }
        return key.count == 32 && name.dropFirst(32).hasPrefix(".")
    }

    /// Makes the folders above `path` that are not there yet (`mkdir -p` of its folder): a
    /// report may go into a folder no one has made yet. Returns what went wrong, or nil.
    static func makeFolder(of path: String) -> String? {
        let folder = parentFolder(path)
        var st = stat()
        if stat(folder, &st) == 0 { return nil }
        if folder != "/", folder != ".", let problem = makeFolder(of: folder) { return problem }
        guard mkdir(folder, 0o777) == 0 || errno == EEXIST else { return String(cString: strerror(errno)) }
        return nil
    }

    /// The folder `path` is in, as the kernel takes it (`.` for a bare name).
    private static func parentFolder(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
