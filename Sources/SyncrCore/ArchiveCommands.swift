#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrArchive
import SyncrManifest

/// `syncr unzip` and `syncr zip`: the same code and safety as `unzip:` downloads and `zip:`
/// uploads, for scripts.
public enum ArchiveCommands {
    /// Why a command failed, in one line that names the file.
    public struct Failure: Error, CustomStringConvertible {
        /// The message: what failed and the archive, file or folder it concerns.
        public var description: String
    }

    /// Unpacks `archive` (zip, tar, tar.gz) into `destination`, replacing that folder in one step
    /// only when everything was unpacked and verified.
    /// - Parameters:
    ///   - maxUnpackedSize: `--max-unpacked-size`; nil: only the free space limits it.
    ///   - replace: `--replace`: `destination` may hold what the archive does not, which goes
    ///     with the old folder. Without it such a folder is refused and left as it was.
    public static func unzip(archive: String, destination: String, stripComponents: Int = 0,
                             maxUnpackedSize: Int64? = nil, replace: Bool = false) throws(Failure) -> UnpackSummary {
        guard FS.kind(archive) == .file else {
            throw Failure(description: "\(archive): no such archive file")
        }
        let target = destination.hasPrefix("/") ? destination
            : FileManager.default.currentDirectoryPath + "/" + destination
        let cleaned = (target as NSString).standardizingPath
        let parent = FS.parentFolder(cleaned)
        if let reason = refusal(replacing: cleaned, archive: archive) {
            throw Failure(description: "\(destination): \(reason); DEST_DIR is replaced as a whole, so give a folder of its own (such as \((destination as NSString).appendingPathComponent("unpacked")))")
        }
        do {
            try FS.makeDirectories(parent)
        } catch {
            throw Failure(description: error.description)
        }
        if [.file, .other].contains(FS.kind(cleaned)) {
            throw Failure(description: "\(destination): a file stands where the folder goes; move it away first")
        }
        let staging = parent + "/.syncr-unpack-\(getpid())-" + ((cleaned as NSString).lastPathComponent)
        FolderReplace.removeTree(staging)
        guard mkdir(staging, 0o755) == 0 else {
            throw Failure(description: "\(staging): cannot create the staging folder: \(String(cString: strerror(errno)))")
        }
        do {
            let summary = try Unpack.extract(archive: archive, name: (archive as NSString).lastPathComponent,
                                             into: staging, stripComponents: stripComponents,
                                             limits: .forUnzipCommand(maxUnpackedSize: maxUnpackedSize))
            if !replace, let foreign = foreignPath(in: cleaned, staging: staging) {
                FolderReplace.removeTree(staging)
                throw Failure(description: "\(destination): holds \(foreign), which \(archive) does not: "
                    + "DEST_DIR is replaced as a whole, which would delete it; unpack into a new or empty folder, "
                    + "or give --replace to delete what is there")
            }
            try FolderReplace.replace(cleaned, with: staging, display: destination)
            return summary
        } catch {
            FolderReplace.removeTree(staging)
            if case .interrupted? = error as? ArchiveError {
                throw Failure(description: "interrupted: \(destination) was left as it was")
            }
            throw Failure(description: "\(error)")
        }
    }
}

extension ArchiveCommands {
    /// Why `folder` must not be replaced by what an archive holds, if it must not: it is (or
    /// holds) the current folder or the archive itself, which the swap would delete. Compared
    /// as the system resolves them (links followed); a folder not there yet holds nothing.
    static func refusal(replacing folder: String, archive: String) -> String? {
        guard let real = resolved(folder) else { return nil }
        func holds(_ path: String?) -> Bool {
            guard let path else { return false }
            return real == "/" || path == real || path.hasPrefix(real + "/")
        }
        if holds(resolved(FileManager.default.currentDirectoryPath)) { return "is the current folder, or holds it" }
        if holds(resolved(archive)) { return "holds the archive being unpacked" }
        return nil
    }

    /// The first path in the folder at `destination` (a link to a folder is followed, as the
    /// replace would empty its target) that the unpacked archive in `staging` does not hold; nil
    /// when there is no folder or the archive covers it (an earlier unpack of the same files).
    static func foreignPath(in destination: String, staging: String) -> String? {
        var st = stat()
        guard stat(destination, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return FolderReplace.firstPathMissing(from: staging, in: resolved(destination) ?? destination)
    }

    /// `path` with every link resolved (`realpath`); nil when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}

extension ArchiveCommands {
    /// Zips `directory` into `output` (paths relative to it, no top-level folder).
    public static func zip(directory: String, output: String, deterministic: Bool) throws(Failure) -> String {
        guard FS.kind(directory) == .directory else {
            throw Failure(description: "\(directory): not a folder")
        }
        do {
            let summary = try ZipWriter.write(directory: directory, to: output,
                                              options: .init(deterministic: deterministic,
                                                             sourceDateEpoch: sourceDateEpoch(), sync: true))
            return "\(summary.entries) entr\(summary.entries == 1 ? "y" : "ies") "
                + "(\(summary.files) file\(summary.files == 1 ? "" : "s"), \(summary.storedFiles) stored as they are), "
                + "\(ByteSize.format(Int64(summary.uncompressedBytes))) in \(ByteSize.format(Int64(summary.archiveBytes)))"
        } catch .interrupted {
            throw Failure(description: "interrupted: \(output) was not written")
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// `SOURCE_DATE_EPOCH`, the reproducible-builds convention for timestamps, when set.
    static func sourceDateEpoch() -> Int64? {
        ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }
}
