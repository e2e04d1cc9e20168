#if canImport(Glibc)
import Glibc
#endif

/// What an unpack did.
public struct UnpackSummary: Sendable, Equatable {
    public var entries: Int
    public var files: Int
    public var bytes: Int64
    /// What the caller should pass on to its user, though nothing failed: files that
    /// `strip_components` left out, and the tar reader's notes (data after the archive's end
    /// ignored, a gzip checksum not checked).
    public var notes: [String]

    public init(entries: Int, files: Int, bytes: Int64, notes: [String] = []) {
        self.entries = entries
        self.files = files
        self.bytes = bytes
        self.notes = notes
    }
}

/// The files (and links) `strip_components` left out of an unpack, as `tar --strip-components`
/// does: a release whose layout changed from `tool-1.2/...` to flat would otherwise lose them
/// without a word. Keeps the first few names and the count.
public struct DroppedFiles: Sendable, Equatable {
    public private(set) var count = 0
    public private(set) var first: [String] = []

    public init() {}

    mutating func add(_ name: String) {
        count += 1
        if first.count < 5 { first.append(name) }
    }

    /// The note for a user, nil when nothing was dropped.
    /// - Parameter setting: what set `strip` (`ExtractionLimits.stripComponentsSetting`).
    func note(strip: Int, setting: String) -> String? {
        guard count > 0 else { return nil }
        let more = count > first.count ? " and \(count - first.count) more" : ""
        return "\(setting) \(strip) left out \(count) file\(count == 1 ? "" : "s") with no more path than that: "
            + first.joined(separator: ", ") + more
    }
}

/// Unpacks a zip, tar or tar.gz archive into a staging folder, whatever its format.
public enum Unpack {
    /// - Parameters:
    ///   - path: the archive file.
    ///   - name: the name to take the format from (the URL's or file's), and to name in messages.
    ///   - staging: an existing, empty folder to unpack into.
    ///   - stripComponents: leading path components to drop from every entry.
    public static func extract(archive path: String, name: String, into staging: String, stripComponents: Int,
                               limits: ExtractionLimits = ExtractionLimits()) throws(ArchiveError) -> UnpackSummary {
        switch try format(of: path, name: name) {
        case .zip:
            return try unzip(archive: path, name: name, into: staging, stripComponents: stripComponents, limits: limits)
        case .tar, .gzip:
            let summary = try TarExtractor.extract(archive: path, into: staging,
                                                   options: TarExtractionOptions(stripComponents: stripComponents,
                                                                                 limits: limits, archiveName: name))
            let notes = [summary.droppedFiles.note(strip: stripComponents, setting: limits.stripComponentsSetting)].compactMap { $0 } + summary.notes
            return UnpackSummary(entries: summary.entries, files: summary.files, bytes: summary.bytes, notes: notes)
        }
    }

    /// The format the first bytes show (zip, gzip, a ustar header), else the one the name's
    /// extension says (an old v7 tar has no magic, nor does a zip with a stub in front). The bytes
    /// come first: a zip served as `latest.tar.gz` was read as a tar cut short, and the error
    /// sent its user looking for a network problem. (A release asset is often served under a
    /// name that says nothing, like `download?id=4`: then only the bytes tell.)
    static func format(of path: String, name: String) throws(ArchiveError) -> ArchiveFormat {
        if let sniffed = try sniff(path) { return sniffed }
        if let known = ArchiveFormat.fromExtension(name) { return known }
        throw .unsupported(archive: name, entry: nil,
                           detail: "not a zip, tar or tar.gz archive (neither its name nor its first bytes say so)")
    }

    private static func sniff(_ path: String) throws(ArchiveError) -> ArchiveFormat? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .io(path: path, errno: errno, detail: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var prefix = [UInt8](repeating: 0, count: 512)
        let n = prefix.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? ArchiveFormat.sniff(prefix[0..<n]) : nil
    }
}

extension Unpack {
    static func unzip(archive path: String, name: String, into staging: String, stripComponents: Int,
                      limits: ExtractionLimits) throws(ArchiveError) -> UnpackSummary {
        let summary = try ZipExtractor.extract(archiveAt: path, into: staging, archiveName: name,
                                               stripComponents: stripComponents, limits: limits)
        return UnpackSummary(entries: summary.entries, files: summary.files, bytes: summary.bytes,
                             notes: [summary.droppedFiles.note(strip: stripComponents, setting: limits.stripComponentsSetting)].compactMap { $0 })
    }
}
