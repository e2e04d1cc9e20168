#if canImport(Glibc)
import Glibc
#endif

/// How to unpack a tar archive.
public struct TarExtractionOptions: Sendable, Equatable {
    /// What to do with device files and FIFOs.
    public enum SpecialFiles: Sendable, Equatable {
        /// Stop with `.unsupported` (the default): an unattended tool should not quietly leave
        /// out part of what was asked for, and should never create device nodes.
        case refuse
        /// Leave them out, listing them in the summary's `skipped`.
        case skip
    }

    /// Leading path components to remove from every name, like `tar --strip-components`.
    /// Entries with no more components than this are skipped.
    public var stripComponents: Int
    public var limits: ExtractionLimits
    public var specialFiles: SpecialFiles
    /// The archive's name in messages (default: the file's last path component).
    public var archiveName: String?

    public init(stripComponents: Int = 0, limits: ExtractionLimits = ExtractionLimits(),
                specialFiles: SpecialFiles = .refuse, archiveName: String? = nil) {
        self.stripComponents = stripComponents
        self.limits = limits
        self.specialFiles = specialFiles
        self.archiveName = archiveName
    }
}

/// What an extraction wrote.
public struct TarExtractionSummary: Sendable, Equatable {
    /// Entries read from the archive (extended headers not counted).
    public var entries = 0
    public var files = 0
    public var directories = 0
    public var symbolicLinks = 0
    public var hardLinks = 0
    /// Bytes of file data written.
    public var bytes: Int64 = 0
    /// Names of the entries left out (the first 1,000): removed by `stripComponents`, the
    /// archive's own root (`./`), and device files or FIFOs when `specialFiles` is `.skip`.
    public var skipped: [String] = []
    /// The files and links `stripComponents` left out (not folders): the first few, and how many.
    public var droppedFiles = DroppedFiles()
    /// Notes from the reader (ignored pax keywords, a missing second zero block).
    public var notes: [String] = []
    /// The archive was gzip-compressed.
    public var compressed = false

    public init() {}
}

/// Unpacks `.tar`, `.tar.gz` and `.tgz` archives into a staging folder through
/// `ExtractionTarget`, which keeps every write inside it.
public enum TarExtractor {
    /// Unpacks an archive into `staging`, stopping at the first error.
    ///
    /// Every name goes through `SafePath.components` (no `..`, no absolute paths), symbolic
    /// links must point inside, hard links must name a file unpacked before them, setuid and
    /// setgid bits are dropped, file modification times are restored. On error the staging
    /// folder holds what was written so far: the caller removes it.
    ///
    /// - Parameters:
    ///   - path: the archive file.
    ///   - staging: an existing, empty folder.
    /// - Throws: `ArchiveError`, naming the archive and the entry.
    @discardableResult
    public static func extract(archive path: String, into staging: String,
                               options: TarExtractionOptions = TarExtractionOptions()) throws(ArchiveError) -> TarExtractionSummary {
        let archive = options.archiveName ?? String(path.split(separator: "/").last ?? Substring(path))
        let target = ExtractionTarget(root: staging, archive: archive, limits: options.limits)
        let handler = TarExtractionHandler(target: target, options: options)
        let result = try TarReader.read(file: path, archive: archive, limits: options.limits, handler: handler)
        var summary = handler.summary
        let kept = summary.files + summary.directories + summary.symbolicLinks + summary.hardLinks
        if kept == 0, options.stripComponents > 0, !summary.skipped.isEmpty {
            throw .stripped(archive: archive, entry: nil, count: options.stripComponents,
                            setting: options.limits.stripComponentsSetting)
        }
        target.finish()
        summary.notes = result.notes
        summary.compressed = result.compressed
        return summary
    }
}

/// Turns entries into files, folders and links. One extraction, one task.
final class TarExtractionHandler: TarEntryHandler {
    let target: ExtractionTarget
    let options: TarExtractionOptions
    private(set) var summary = TarExtractionSummary()
    private var writer: EntryWriter?

    init(target: ExtractionTarget, options: TarExtractionOptions) {
        self.target = target
        self.options = options
    }

    private var archive: String { target.archive }

    /// The components an entry is written at, or nil to skip it.
    ///
    /// Checked on the whole name first, so `../x` is refused even when stripping would remove
    /// the `..`. Stripping then counts components as GNU tar does (`stripped_prefix_len`): `.`
    /// counts, repeated slashes do not, so `./a/b` with 1 stripped is `a/b`.
    func destination(_ name: String, entry: String, what: String = "name") throws(ArchiveError) -> [String]? {
        do {
            _ = try SafePath.components(name)
        } catch .empty {
            // `.` or `./`: the archive's own root, which is the staging folder.
            if !name.isEmpty, SafePath.split(name).allSatisfy(SafePath.isDot) { return nil }
            throw .unsafePath(archive: archive, entry: entry, detail: "the \(what) is empty")
        } catch {
            throw .unsafePath(archive: archive, entry: entry, detail: "\(what == "name" ? "" : "its \(what): ")\(error)")
        }
        let raw = SafePath.split(name)
        guard let kept = SafePath.strip(raw, options.stripComponents) else { return nil }
        // What is left is a tail of a name that passed: only `.` components can empty it.
        return try? SafePath.components(kept.joined(separator: "/"))
    }

    func begin(_ entry: TarEntry) throws(ArchiveError) {
        summary.entries += 1
        guard let components = try destination(entry.name, entry: entry.name) else {
            // Counted like any entry, and only the first names kept: a tar.gz of millions of
            // stripped headers compresses a thousandfold and created nothing to stop it.
            try target.count(entry.name)
            if summary.skipped.count < 1000 { summary.skipped.append(entry.name) }
            if entry.kind != .directory, options.stripComponents > 0 { summary.droppedFiles.add(entry.name) }
            return
        }
        switch entry.kind {
        case .file:
            // The header says how much follows: refuse what would not fit before writing it.
            try target.reserve(entry.size, entry: entry.name)
            writer = try target.file(components, mode: mode_t(entry.mode), entry: entry.name)
        case .directory:
            try target.directory(components, mode: mode_t(entry.mode), entry: entry.name)
            summary.directories += 1
        case .symbolicLink(let linkTarget):
            // A symbolic link's target is kept as stored (tar does not strip it either).
            try target.symlink(components, target: linkTarget, entry: entry.name)
            summary.symbolicLinks += 1
        case .hardLink(let linkTarget):
            // A hard link names an earlier entry, so its target is stripped like a name.
            guard let existing = try destination(linkTarget, entry: entry.name, what: "hard link target \(linkTarget)") else {
                throw .unsafePath(archive: archive, entry: entry.name,
                                  detail: "its hard link target \(linkTarget) is removed by \(options.limits.stripComponentsSetting)")
            }
            try target.hardLink(components, to: existing, entry: entry.name)
            summary.hardLinks += 1
        case .characterDevice, .blockDevice, .fifo:
            let what = entry.kind == .fifo ? "a FIFO" : entry.kind == .blockDevice ? "a block device" : "a character device"
            switch options.specialFiles {
            case .refuse:
                throw .unsupported(archive: archive, entry: entry.name,
                                   detail: "\(what): syncr unpacks only files, folders and links")
            case .skip:
                try target.count(entry.name)
                if summary.skipped.count < 1000 { summary.skipped.append(entry.name) }
            }
        }
    }

    func data(_ bytes: UnsafeRawBufferPointer, of entry: TarEntry) throws(ArchiveError) {
        try writer?.write(bytes)
    }

    func end(_ entry: TarEntry) throws(ArchiveError) {
        guard let writer else { return }
        self.writer = nil
        try writer.close(modificationTime: entry.modificationTime)
        summary.files += 1
        summary.bytes += writer.written
    }
}
