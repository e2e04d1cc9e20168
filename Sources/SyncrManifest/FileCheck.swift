#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few questions the decoder asks the file system (for `ca_cert:`, which must exist when
/// the manifest is validated rather than fail the first https transfer).
enum FileCheck {
    enum Kind: Equatable {
        case file, directory, missing
        case unreadable(String)
    }

    /// What is at `path` (symlinks followed), and whether a regular file there can be read.
    static func kind(_ path: String) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            return .unreadable(String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { return .directory }
        guard access(path, R_OK) == 0 else { return .unreadable(String(cString: strerror(errno))) }
        return .file
    }
}
