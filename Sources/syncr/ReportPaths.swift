#if canImport(Glibc)
import Glibc
#endif
import SyncrManifest

/// Where `--report` and `--junit` may not be written, checked once the manifest is read and
/// before anything moves: a report there would destroy what syncr keeps or sends, or could not
/// be written at all, which a long run would find only at its end.
enum ReportPaths {
    /// Why `path` cannot take a report and what to do, as the end of "FLAG PATH: ..."; nil when
    /// it can.
    /// - Parameter cache: the run's cache folder (absolute, normalized).
    static func problem(_ path: String, manifest: Manifest, cache: String) -> String? {
        if let download = manifest.download(writing: path) {
            return "downloads[\(download.index)] (\(Rendering.printable(download.to))) writes there; give the report a file of its own"
        }
        // Removed at the start, then written where the file to send was: the next run sends it.
        if let upload = manifest.upload(reading: path) {
            return "uploads[\(upload.index)] (\(Rendering.printable(upload.from))) reads it; give the report a file of its own"
        }
        // A cache at the manifest's folder or above it (`cache: .`) holds everything there:
        // only a folder of its own is the cache's alone.
        if !Manifest.path(manifest.directory, isIn: cache), Manifest.path(path, isIn: cache) {
            return "it is in syncr's cache folder (\(Rendering.printable(cache))), whose records, data and lock it would replace; give the report a file outside it"
        }
        // The path is taken as given, like any file argument (`a/../r.json` needs `a`).
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { return "it is a folder; name a file in it" }
        let folder = parentFolder(path)
        if stat(folder, &st) != 0 || st.st_mode & S_IFMT != S_IFDIR {
            return "its folder \(Rendering.printable(folder)) does not exist; create it first"
        }
        if access(folder, W_OK) != 0 {
            return "its folder \(Rendering.printable(folder)) cannot be written (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    /// The folder `path` is in, as the kernel takes it (`.` for a bare name).
    private static func parentFolder(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
