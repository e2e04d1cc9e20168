#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrLock

/// The files an upload sends: one file, or every regular file below a folder, sorted by path.
struct UploadTree: Sendable {
    struct File: Sendable, Equatable {
        /// Path relative to the upload's folder (for a single file: its name), `/`-separated.
        var relative: String
        /// Absolute path.
        var path: String
        var fingerprint: FileFingerprint
    }

    /// Whether `from` named a folder.
    var isDirectory: Bool
    var files: [File]
    /// Links in the folder that are not sent: to a folder (not entered) or to nothing.
    var linksNotSent: [String] = []

    var totalSize: Int64 { files.reduce(0) { $0 + $1.fingerprint.size } }

    /// Why a source cannot be read; the entry's `SyncError.uploadSource` words it.
    enum Problem: Error {
        case missing(String)
        case unreadable(String, Int32)
        case notAFileOrFolder(String)
        case namesDifferOnlyInNormalization(folder: String, String, String)
        case nameNotUTF8(folder: String, String)
        /// The walk stopped in this folder because its task was cancelled (`Cancellation`).
        case interrupted(String)

        /// The file or folder it is about.
        var path: String {
            switch self {
            case .missing(let path), .unreadable(let path, _), .notAFileOrFolder(let path),
                 .namesDifferOnlyInNormalization(let path, _, _), .nameNotUTF8(let path, _), .interrupted(let path): return path
            }
        }

        /// What is wrong with it, as an entry's error tells it.
        var problem: SyncError.SourceProblem {
            switch self {
            case .missing: return .missing
            case .unreadable(_, let code): return .unreadable(errno: code)
            case .notAFileOrFolder: return .notAFileOrFolder
            case .namesDifferOnlyInNormalization(_, let a, let b): return .namesDifferOnlyInNormalization(a, b)
            case .nameNotUTF8(_, let name): return .nameNotUTF8(name)
            // Not a problem of the source: `read` turns it into `Interrupted` (`BlockingIO`).
            case .interrupted: return .unreadable(errno: ECANCELED)
            }
        }
    }

    /// `scan`, with a folder's walk off Swift's cooperative pool (`BlockingIO`): a large tree is
    /// many system calls, and on a slow file system each can take long. A cancelled task's
    /// walk stops at the next name and throws `Interrupted`; a single file (two `stat`s) is
    /// read in place.
    /// - Throws: `Problem`, or `Interrupted`.
    static func read(_ source: String, excluding excluded: [String] = []) async throws -> UploadTree {
        var st = stat()
        guard stat(source, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return try scan(source, excluding: excluded) }
        return try await BlockingIO.run { try scan(source, excluding: excluded) }
    }

    /// Reads the tree at `source`. Symbolic links to files are followed; links to folders are
    /// not entered (a loop would never end), nor are other special files sent. A walk stops
    /// with `.interrupted` once `Cancellation.isRequested`.
    /// - Parameter excluded: folders left out with everything in them, told by device and inode
    ///   (syncr's own, when `source` holds the cache: `Session.notUploaded`).
    static func scan(_ source: String, excluding excluded: [String] = []) throws(Problem) -> UploadTree {
        var st = stat()
        guard stat(source, &st) == 0 else {
            throw errno == ENOENT ? .missing(source) : .unreadable(source, errno)
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            guard let fp = FS.fingerprint(source) else { throw .unreadable(source, errno) }
            return UploadTree(isDirectory: false,
                              files: [File(relative: (source as NSString).lastPathComponent, path: source, fingerprint: fp)])
        case S_IFDIR:
            var files: [File] = []
            var linksNotSent: [String] = []
            let skip = excluded.compactMap { path -> (dev: UInt64, ino: UInt64)? in
                var st = stat()
                return stat(path, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
            }
            try walk(source, relative: "", skip: skip, into: &files, linksNotSent: &linksNotSent)
            files.sort { $0.relative < $1.relative }
            // String order and equality are Unicode's: such names sort next to each other.
            for (a, b) in zip(files, files.dropFirst()) where a.relative == b.relative {
                throw .namesDifferOnlyInNormalization(folder: source, a.relative, b.relative)
            }
            return UploadTree(isDirectory: true, files: files, linksNotSent: linksNotSent.sorted())
        default:
            throw .notAFileOrFolder(source)
        }
    }

    private static func walk(_ folder: String, relative: String, skip: [(dev: UInt64, ino: UInt64)],
                             into files: inout [File], linksNotSent: inout [String]) throws(Problem) {
        guard let dir = opendir(folder) else { throw .unreadable(folder, errno) }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            // A name that is not UTF-8 would come out repaired (U+FFFD), naming no file.
            guard let name = validDirectoryEntryName(entry) else {
                throw .nameNotUTF8(folder: folder, directoryEntryBytesShown(entry))
            }
            if name == "." || name == ".." { continue }
            if Cancellation.isRequested { throw .interrupted(folder) }
            let path = folder + "/" + name
            let rel = relative.isEmpty ? name : relative + "/" + name
            var lst = stat()
            guard lstat(path, &lst) == 0 else { throw .unreadable(path, errno) }
            switch lst.st_mode & S_IFMT {
            case S_IFDIR:
                if skip.contains(where: { UInt64(lst.st_dev) == $0.dev && UInt64(lst.st_ino) == $0.ino }) { continue }
                try walk(path, relative: rel, skip: skip, into: &files, linksNotSent: &linksNotSent)
            case S_IFREG, S_IFLNK:
                // `fingerprint` follows links and answers only for regular files, so a link to
                // a folder (or to nothing) is skipped here, and said.
                if let fp = FS.fingerprint(path) {
                    files.append(File(relative: rel, path: path, fingerprint: fp))
                } else if lst.st_mode & S_IFMT == S_IFLNK {
                    linksNotSent.append(rel)
                }
            default:
                continue
            }
        }
    }
}

/// What was sent by the last successful upload of an entry, kept in the cache as
/// `<md5 of method, source and URL>.upload`.
struct UploadRecord: Codable, Sendable, Equatable {
    struct SentFile: Codable, Sendable, Equatable {
        var size: Int64
        var sha256: String
        /// How the file looked when it was hashed, so an unchanged file is not hashed again.
        var fingerprint: FileFingerprint
    }

    var format = 1
    var method: String
    /// The URL as written (never expanded).
    var url: String
    var from: String
    /// Per relative path.
    var files: [String: SentFile]
    /// For `zip: true`: the folder's files when they were zipped, per relative path, so that
    /// `plan` can tell an unchanged folder from its files alone, without building the archive.
    var sources: [String: SentFile]? = nil
    /// For `zip: true`: MD5 of what the archive held besides file contents (`ZipWriter.shape`):
    /// folders, links, permission bits. Nil in records written before it was kept.
    var sourceShape: String? = nil
    var uploaded: Int64 = 0

    var totalSize: Int64 { files.values.reduce(0) { $0 + $1.size } }
}
