#if canImport(Glibc)
import Glibc
#endif

/// What an extraction unpacked.
public struct ZipExtractionSummary: Sendable, Equatable {
    /// Entries unpacked (files, folders and links), not counting skipped ones.
    public var entries = 0
    public var files = 0
    public var directories = 0
    public var symlinks = 0
    /// Entries left out because `stripComponents` removed their whole name.
    public var skipped = 0
    /// The files and links among them (not folders), the first few by name, and how many.
    public var droppedFiles = DroppedFiles()
    /// Bytes written to files.
    public var bytes: Int64 = 0

    public init() {}
}

/// Unpacks a zip archive into a staging folder, entry by entry, stopping at the first error.
///
/// Every name goes through `SafePath.components` (no absolute paths, `..`, backslashes, drive
/// letters or NUL) and every write through `ExtractionTarget` (no writes through links, links
/// must point inside, the total against the free space and the explicit limit). On an error the staging folder holds a part of
/// the archive; the caller discards it.
public enum ZipExtractor {
    /// The longest symbolic link target read from an archive (Linux's PATH_MAX).
    public static let maximumLinkTarget = 4096

    /// Unpacks the archive at `path` into `staging`, an existing empty folder.
    /// - Parameters:
    ///   - archiveName: how messages name the archive (default: `path`).
    ///   - stripComponents: leading name components to remove; entries with no more than this
    ///     many components are skipped.
    /// - Throws: `ArchiveError`, naming the archive and, where there is one, the entry.
    @discardableResult
    public static func extract(archiveAt path: String, into staging: String, archiveName: String? = nil,
                               stripComponents: Int = 0, limits: ExtractionLimits = ExtractionLimits()) throws(ArchiveError) -> ZipExtractionSummary {
        let reader = try ZipReader(path: path, archiveName: archiveName, maxEntries: limits.maxEntries)
        let target = ExtractionTarget(root: staging, archive: reader.archive, limits: limits)
        return try extract(reader, into: target, stripComponents: stripComponents)
    }

    /// Unpacks every entry of `reader` through `target`, then calls `target.finish()` and
    /// restores folder modification times.
    @discardableResult
    public static func extract(_ reader: ZipReader, into target: ExtractionTarget,
                               stripComponents: Int = 0) throws(ArchiveError) -> ZipExtractionSummary {
        let archive = reader.archive
        if reader.entries.count > target.limits.maxEntries {
            throw .limit(archive: archive, entry: nil,
                         detail: "more than \(target.limits.maxEntries) entries (\(reader.entries.count))")
        }
        // The central directory declares every size, and the reader refuses data that exceeds
        // it: a total that would not fit is refused before anything is written.
        try target.reserve(declaredTotal(reader.entries))
        var summary = ZipExtractionSummary()
        var folderTimes: [(path: String, time: Int64)] = []
        for entry in reader.entries {
            let full: [String]
            do { full = try SafePath.components(entry.name) } catch {
                // `./`: the archive's own root, which the staging folder is (some writers store
                // it; the tar reader skips it too).
                if error == .empty, entry.isDirectory, !SafePath.split(entry.name).isEmpty,
                   SafePath.split(entry.name).allSatisfy(SafePath.isDot) {
                    continue
                }
                throw .unsafePath(archive: archive, entry: entry.name, detail: error.description)
            }
            guard let components = SafePath.strip(full, max(stripComponents, 0)) else {
                summary.skipped += 1
                if !entry.isDirectory { summary.droppedFiles.add(entry.name) }
                continue
            }
            // Refuse what cannot be read before anything is created for the entry.
            if entry.isEncrypted {
                throw .unsupported(archive: archive, entry: entry.name, detail: "encrypted entries are not supported")
            }
            if entry.isDirectory {
                try target.directory(components, mode: mode_t(entry.unixMode ?? 0o755), entry: entry.name)
                folderTimes.append((target.root + "/" + components.joined(separator: "/"), entry.modificationTime))
                summary.directories += 1
            } else if entry.isSymlink {
                let raw = try reader.contents(of: entry, limit: maximumLinkTarget)
                guard let linkTarget = String(validating: raw, as: UTF8.self) else {
                    throw .unsafePath(archive: archive, entry: entry.name, detail: "the link's target is not valid UTF-8")
                }
                try target.symlink(components, target: linkTarget, entry: entry.name)
                setTime(target.root + "/" + components.joined(separator: "/"), entry.modificationTime)
                summary.symlinks += 1
            } else {
                guard ZipMethodName.isReadable(entry.compressionMethod) else {
                    throw .unsupported(archive: archive, entry: entry.name, detail: ZipMethodName.refusal(entry.compressionMethod))
                }
                // Anything else made on Unix (a FIFO from `zip - -`, a device) unpacks as a plain file.
                let mode = entry.unixMode.map { mode_t($0 & 0o7777) } ?? 0o644
                let writer = try target.file(components, mode: mode, entry: entry.name,
                                             compressedSize: Int64(clamping: entry.compressedSize))
                try reader.read(entry) { piece throws(ArchiveError) in try writer.write(piece) }
                try writer.close(modificationTime: entry.modificationTime)
                summary.files += 1
                summary.bytes += writer.written
            }
            summary.entries += 1
        }
        if summary.entries == 0, summary.skipped > 0 {
            throw .stripped(archive: archive, entry: nil, count: stripComponents, setting: target.limits.stripComponentsSetting)
        }
        target.finish()
        // Folder times last: creating entries inside a folder changes its time.
        for (path, time) in folderTimes.reversed() { setTime(path, time) }
        return summary
    }

    /// The sum of the files' declared sizes (saturating: an archive can declare anything).
    static func declaredTotal(_ entries: [ZipEntry]) -> Int64 {
        var total: Int64 = 0
        for entry in entries where !entry.isDirectory {
            let (sum, overflow) = total.addingReportingOverflow(Int64(clamping: entry.uncompressedSize))
            if overflow { return .max }
            total = sum
        }
        return total
    }

    /// Sets a file's, folder's or link's (not its target's) modification time; best effort.
    private static func setTime(_ path: String, _ seconds: Int64) {
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }
}
