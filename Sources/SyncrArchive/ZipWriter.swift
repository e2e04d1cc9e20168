#if canImport(Glibc)
import Glibc
#endif
import CZlib
import SyncrLock

/// Zips a folder: what syncr uploads when a folder is to be sent as one archive.
///
/// The archive holds the folder's contents (not the folder itself) under names relative to it,
/// sorted by the bytes of their UTF-8 names: folders as `name/` entries (empty ones too),
/// files, and symbolic links as links (their target as data) when the target stays inside the
/// folder. Unix permissions go in the external attributes (`version made by` host 3). Names
/// are UTF-8 with general purpose bit 11 set.
///
/// Each entry's modification time is stored twice, as Info-ZIP's zip stores it: as an MS-DOS
/// date and time in local time (what every tool reads, in two-second steps, and wrong by the
/// difference when unpacked in another time zone), and as UTC seconds in an extended timestamp
/// extra field (what Info-ZIP's unzip and syncr read instead, exact in any zone).
///
/// Files are read in 1 MiB blocks and compressed on several threads (see `ZipWriter+Blocks`);
/// the archive is the same bytes whatever the thread count. Already-compressed files are stored.
/// ZIP64 records appear only where a size, an offset or the entry count needs them.
/// The archive is built under a temporary name beside `output` and renamed into place when
/// complete.
public enum ZipWriter {
    /// How to write the archive.
    public struct Options: Sendable, Equatable {
        /// zlib level, 0 (store everything) to 9. 6 is zlib's and Info-ZIP's default.
        public var level: Int
        /// Every entry gets the time 1980-01-01 00:00:00, and no extended timestamp, so the same
        /// tree always gives the same bytes whatever the files' modification times.
        public var deterministic: Bool
        /// When set (from `SOURCE_DATE_EPOCH`, read by the caller), every entry gets this time,
        /// in UTC, in both its MS-DOS time and its extended timestamp; it takes precedence over
        /// `deterministic`. Seconds since 1970.
        public var sourceDateEpoch: Int64?
        /// Compression threads; the archive's bytes do not depend on it.
        public var threads: Int
        /// Flush the archive to disk (`fdatasync`) before renaming it into place.
        public var sync: Bool
        /// Files or folders inside the folder that are not stored (with everything under them),
        /// told by device and inode, so any spelling of their path matches: syncr's cache, when
        /// an upload zips the folder that holds it.
        public var excluded: [String]

        /// - Parameter threads: nil for the number of online cores.
        public init(level: Int = 6, deterministic: Bool = false, sourceDateEpoch: Int64? = nil,
                    threads: Int? = nil, sync: Bool = false, excluded: [String] = []) {
            self.level = level
            self.deterministic = deterministic
            self.sourceDateEpoch = sourceDateEpoch
            self.threads = threads ?? ZipWriter.onlineCores
            self.sync = sync
            self.excluded = excluded
        }
    }

    /// What was written.
    public struct Summary: Sendable, Equatable {
        /// Entries in the archive (folders, files and links).
        public var entries: Int
        public var directories: Int
        public var files: Int
        public var symbolicLinks: Int
        /// Files stored without compression (already compressed, empty, or not worth it).
        public var storedFiles: Int
        public var deflatedFiles: Int
        /// The sum of the files' and links' sizes.
        public var uncompressedBytes: UInt64
        /// The archive's size.
        public var archiveBytes: UInt64
        /// Whether the ZIP64 end records were written (more than 65,534 entries, or a central
        /// directory beyond 4 GiB).
        public var zip64EndRecords: Bool
        /// Entries that carry a ZIP64 extra field.
        public var zip64Entries: Int
    }

    /// The number of online cores, at least 1.
    public static var onlineCores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Zips the contents of `directory` into the file `output`.
    /// - Parameters:
    ///   - directory: the folder whose contents are stored (it is not itself an entry).
    ///   - output: the archive to create or replace; it only appears once complete.
    /// - Throws: `ArchiveError.unsafePath` for a symbolic link that points outside `directory`,
    ///   `.unsupported` for a fifo, socket or device, or a name that is not UTF-8, `.io` for
    ///   a file that cannot be read (or changed while being read) or an archive that cannot be
    ///   written. Each names the file or entry. `.interrupted` when the calling task is
    ///   cancelled (on a thread serving a task, when that task is: `Cancellation`). Whatever
    ///   the error, nothing is left at `output` or beside it.
    public static func write(directory: String, to output: String,
                             options: Options = Options()) throws(ArchiveError) -> Summary {
        guard (0...9).contains(options.level) else {
            throw .unsupported(archive: output, entry: nil, detail: "compression level \(options.level) is not between 0 and 9")
        }
        let skip = ZipSourceScanner.identities([output] + options.excluded)
        let entries = try ZipSourceScanner(archive: output, skip: skip).scan(directory: directory)

        let file = try ZipOutputFile(destination: output)
        let threads = max(1, options.threads)
        let pipeline = ZipPipeline(entries: entries, threads: threads, level: Int32(options.level))
        try pipeline.start(threads: threads)
        defer { pipeline.stop() }

        var summary = Summary(entries: entries.count, directories: 0, files: 0, symbolicLinks: 0, storedFiles: 0,
                              deflatedFiles: 0, uncompressedBytes: 0, archiveBytes: 0, zip64EndRecords: false,
                              zip64Entries: 0)
        var records: [ZipEntryRecord] = []
        records.reserveCapacity(entries.count)
        var nextJob = 0
        let fixedTime = options.sourceDateEpoch.map(Self.utcTime) ?? (options.deterministic ? DOSDateTime.epoch : nil)

        for entry in entries {
            if Cancellation.isRequested { throw .interrupted(path: output) }
            var record = ZipEntryRecord(name: entry.name, method: .stored,
                                        modified: fixedTime ?? Self.localTime(entry.modified),
                                        crc32: 0, compressedSize: 0, uncompressedSize: 0,
                                        localHeaderOffset: file.position, mode: entry.mode,
                                        isDirectory: false, localZip64: false,
                                        utcModified: Self.extendedTime(entry.modified, options: options))
            switch entry.kind {
            case .directory:
                record.isDirectory = true
                summary.directories += 1
                try file.write(record.localFileHeader())
            case .symlink(let target):
                var crc = CRC32()
                target.withUnsafeBytes { crc.update($0) }
                record.crc32 = crc.value
                record.compressedSize = UInt64(target.count)
                record.uncompressedSize = UInt64(target.count)
                summary.symbolicLinks += 1
                summary.uncompressedBytes += UInt64(target.count)
                try file.write(record.localFileHeader())
                try file.write(target)
            case .file(let size):
                summary.files += 1
                summary.uncompressedBytes += UInt64(size)
                record.uncompressedSize = UInt64(size)
                // The size is known up front, so whether the local header needs ZIP64 is too;
                // the header is written now and rewritten, same length, once CRC and sizes are known.
                record.localZip64 = ZipBlocks.compressedBound(size) >= ZipConstants.max32
                try file.write(record.localFileHeader())
                var crc: UInt = 0
                var compressed: UInt64 = 0
                var method = ZipMethod.stored
                for block in 0..<ZipBlocks.count(size) {
                    if Cancellation.isRequested { throw .interrupted(path: output) }
                    let result = try pipeline.take(nextJob)
                    if block == 0 { method = result.method }
                    crc = crc32_combine(crc, UInt(result.crc32), Int(result.length))
                    compressed += UInt64(result.bytes.count)
                    try file.write(result.bytes)
                    nextJob += 1
                }
                record.method = method
                record.crc32 = UInt32(truncatingIfNeeded: crc)
                record.compressedSize = compressed
                if method == .stored { summary.storedFiles += 1 } else { summary.deflatedFiles += 1 }
                if !record.localZip64 && (compressed >= ZipConstants.max32 || UInt64(size) >= ZipConstants.max32) {
                    // compressedBound makes this unreachable; refuse rather than write a wrong header.
                    throw .limit(archive: output, entry: entry.displayName,
                                 detail: "the compressed data grew past the size reserved for it")
                }
                if size > 0 { try file.patch(record.localFileHeader(), at: record.localHeaderOffset) }
            }
            records.append(record)
        }

        // Central directory, then the end records.
        let centralDirectoryOffset = file.position
        var w = LittleEndianWriter(capacity: 1 << 16)
        for record in records {
            if record.usesZip64 { summary.zip64Entries += 1 }
            record.centralDirectoryHeader().append(to: &w)
            if w.bytes.count >= 1 << 16 {
                try file.write(w.bytes)
                w.removeAll()
            }
        }
        try file.write(w.bytes)
        w.removeAll()
        let end = EndRecords(entries: UInt64(records.count), centralDirectorySize: file.position - centralDirectoryOffset,
                             centralDirectoryOffset: centralDirectoryOffset)
        summary.zip64EndRecords = end.needsZip64
        end.append(to: &w, at: file.position)
        try file.write(w.bytes)
        summary.archiveBytes = file.position
        try file.commit(sync: options.sync)
        return summary
    }

    /// The time an entry's extended timestamp states: `sourceDateEpoch`, else the entry's own
    /// modification time. None in a deterministic archive: its fixed 1980 time is no file's
    /// time, and without the field such archives keep the bytes they always had. None either
    /// for a time before 1970 or after 2038-01-19 UTC: the MS-DOS time alone then stands
    /// (clamped to 1980 for the early ones). The field is signed, but Info-ZIP's unzip built
    /// with a 64-bit `time_t` ignores a negative one, and Go's reader takes it as unsigned (a
    /// time in 2106).
    static func extendedTime(_ modified: Int64, options: Options) -> Int32? {
        guard let seconds = options.sourceDateEpoch ?? (options.deterministic ? nil : modified), seconds >= 0 else { return nil }
        return Int32(exactly: seconds)
    }

    /// `seconds` (since 1970) as a UTC date and time.
    static func utcTime(_ seconds: Int64) -> DOSDateTime {
        var t = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return .epoch }
        return DOSDateTime(parts)
    }

    /// `seconds` (since 1970) as a local date and time, as Info-ZIP stores modification times.
    static func localTime(_ seconds: Int64) -> DOSDateTime {
        var t = time_t(seconds)
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return .epoch }
        return DOSDateTime(parts)
    }
}

extension ZipWriter.DOSDateTime {
    init(_ parts: tm) {
        self.init(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                  hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }
}
