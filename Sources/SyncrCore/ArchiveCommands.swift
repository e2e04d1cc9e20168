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
    ///   - stripComponents: `--strip-components`: leading folders dropped from each name (0 or more).
    ///   - maxUnpackedSize: `--max-unpacked-size` (above 0); nil: only the free space limits it.
    ///   - replace: `--replace`: `destination` may hold what the archive does not, which goes
    ///     with the old folder. Without it such a folder is refused and left as it was.
    public static func unzip(archive: String, destination: String, stripComponents: Int = 0,
                             maxUnpackedSize: Int64? = nil, replace: Bool = false) throws(Failure) -> UnpackSummary {
        // The command line refuses these; a library caller's are refused as plainly (a
        // negative strip was taken as 0, and a negative limit refused every entry as "more
        // than the -1 bytes").
        guard stripComponents >= 0 else { throw Failure(description: "--strip-components \(stripComponents): expected 0 or more") }
        if let limit = maxUnpackedSize, limit <= 0 {
            throw Failure(description: "--max-unpacked-size \(limit): expected a size above 0")
        }
        // Named on the command line: a link to an archive is the archive.
        switch FS.kind(archive, followingLinks: true) {
        case .file: break
        case .missing: throw Failure(description: "\(archive): no such archive file")
        case .directory: throw Failure(description: "\(archive): is a folder, not an archive")
        case .other: throw Failure(description: "\(archive): is not a regular file; give the archive's file")
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
    /// Zips `directory` into `output` (paths relative to it, no top-level folder). `output` may
    /// be missing, empty or an earlier zip archive: anything else is refused, as a pair of
    /// arguments swapped or mistyped would otherwise destroy the file.
    public static func zip(directory: String, output: String, deterministic: Bool) throws(Failure) -> String {
        // Named on the command line: a link to a folder is the folder (its entries are walked
        // as usual: links inside it are stored as links).
        switch FS.kind(directory, followingLinks: true) {
        case .directory: break
        case .missing: throw Failure(description: "\(directory): no such folder")
        case .file, .other: throw Failure(description: "\(directory): not a folder; syncr zip takes the folder to zip first, then the archive")
        }
        try refuseToReplace(output)
        let epoch = try sourceDateEpoch()
        let root = FS.kind(directory) == .directory ? directory : resolved(directory) ?? directory
        do {
            let summary = try ZipWriter.write(directory: root, to: output,
                                              options: .init(deterministic: deterministic, sourceDateEpoch: epoch, sync: true))
            return "\(summary.entries) entr\(summary.entries == 1 ? "y" : "ies") "
                + "(\(summary.files) file\(summary.files == 1 ? "" : "s"), \(summary.storedFiles) stored as they are), "
                + "\(ByteSize.format(Int64(summary.uncompressedBytes))) in \(ByteSize.format(Int64(summary.archiveBytes)))"
        } catch .interrupted {
            throw Failure(description: "interrupted: \(output) was not written")
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// `SOURCE_DATE_EPOCH`, the reproducible-builds convention for timestamps, when set. A value
    /// that is not a whole number of seconds is refused: ignored, it gave the files' own times
    /// and an archive that differs from build to build, with nothing said. An empty one is
    /// unset (CI configurations export it empty to mean that).
    static func sourceDateEpoch(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(Failure) -> Int64? {
        guard let text = environment["SOURCE_DATE_EPOCH"], !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        guard let seconds = Int64(text.trimmingCharacters(in: .whitespaces)), seconds >= 0 else {
            throw Failure(description: "SOURCE_DATE_EPOCH is '\(text)', not a whole number of seconds since 1970-01-01 UTC; "
                + "set it to one (such as the last commit's time: git log -1 --format=%ct) or unset it")
        }
        return seconds
    }

    /// Refuses an `output` that is not for an archive: a folder (found before the whole tree
    /// was compressed), or a file that is neither empty nor a zip archive.
    static func refuseToReplace(_ output: String) throws(Failure) {
        switch FS.kind(output, followingLinks: true) {
        case .missing:
            return
        case .directory:
            throw Failure(description: "\(output): is a folder; give the archive's file name (such as \(output)/archive.zip)")
        case .other:
            throw Failure(description: "\(output): is not a regular file; give the archive's file name")
        case .file:
            let fd = open(output, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                // Unread, it could be anything: the rename would replace it all the same.
                throw Failure(description: "\(output): exists and cannot be read to check that it is an archive "
                    + "(\(String(cString: strerror(errno)))); move it away or name another file")
            }
            defer { close(fd) }
            var magic = [UInt8](repeating: 0, count: 4)
            let count = read(fd, &magic, 4)
            // Empty (made by mktemp), or a zip: a local header, or the end record of an empty one.
            if count == 0 || (count == 4 && magic[0] == 0x50 && magic[1] == 0x4B
                              && ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6))) { return }
            throw Failure(description: "\(output): exists and is not a zip archive; syncr zip writes over an earlier archive "
                + "only: move the file away or name another (the folder to zip comes first, then the archive)")
        }
    }
}
