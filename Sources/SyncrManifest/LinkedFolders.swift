#if canImport(Glibc)
import Glibc
#endif

/// Destinations as the file system will take them: the folders that exist on the way resolved
/// (`realpath`), so that two entries written `real/a.bin` and `alias/a.bin`, with `alias` a
/// link to `real`, are seen to be one file. Compared as written, they passed, and each run
/// wrote the file over with the other's bytes (two unpacked folders raced).
///
/// Only the folder part is resolved: a destination that is itself a link is replaced by the
/// rename that places the file, not followed. A folder not there yet is resolved as its
/// nearest existing ancestor, then the rest as written. Each folder is resolved once per
/// manifest (most share a few folders), and `validate` looks at the disk for this as for the
/// cache folder.
struct LinkedFolders {
    private var resolved: [String: String] = [:]

    /// `destination` (absolute, normalized) with its folder resolved.
    mutating func real(_ destination: String) -> String {
        let folder = LexicalPath.parent(of: destination)
        let real = realFolder(folder)
        // Most folders hold no link: the destination is its own string, not a copy (20,000
        // copies were 2 MB of a validate's peak).
        if real == folder { return destination }
        let name = destination.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(destination[destination.utf8.index(after: $0)...]) }
            ?? destination
        return real == "/" ? "/" + name : real + "/" + name
    }

    private mutating func realFolder(_ folder: String) -> String {
        if folder == "/" || folder == "." { return folder }
        if let known = resolved[folder] { return known }
        let found: String
        if let p = realpath(folder, nil) {
            found = String(cString: p)
            free(p)
        } else {
            // Not there (or not a folder): its parent's resolution, then its name as written.
            found = real(folder)
        }
        resolved[folder] = found
        return found
    }
}
