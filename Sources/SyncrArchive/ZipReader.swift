#if canImport(Glibc)
import Glibc
#endif

/// One entry of a zip archive, as its central directory describes it (ZIP64 values resolved).
public struct ZipEntry: Sendable, Equatable {
    /// The name as stored (`/`-separated; folders end in `/`), decoded by `ZipText.decodeName`.
    public var name: String
    /// The name's bytes as stored.
    public var rawName: [UInt8]
    public var isDirectory: Bool
    /// A symbolic link: made on Unix with `S_IFLNK` in the external attributes; its data is the target.
    public var isSymlink: Bool
    /// The Unix mode (type and permission bits) when the entry was made on a Unix-like host and
    /// records one; nil otherwise.
    public var unixMode: UInt16?
    public var crc32: UInt32
    public var compressedSize: UInt64
    public var uncompressedSize: UInt64
    /// 0 stored, 8 deflated; others are listed but cannot be read.
    public var compressionMethod: UInt16
    public var generalPurposeBitFlag: UInt16
    public var versionMadeBy: UInt16
    public var externalFileAttributes: UInt32
    public var localHeaderOffset: UInt64
    /// Seconds since 1970: from the extended timestamp extra field (0x5455) when there is one,
    /// else the MS-DOS date and time read as local time (as Info-ZIP does).
    public var modificationTime: Int64
    /// Where the entry's data starts, after its local header.
    public var dataOffset: UInt64

    /// Bit 0 (traditional encryption) or bit 6 (strong encryption) of the flags.
    public var isEncrypted: Bool { generalPurposeBitFlag & 0x0041 != 0 }
    /// Bit 3: CRC and sizes follow the data in a data descriptor.
    public var hasDataDescriptor: Bool { generalPurposeBitFlag & 0x0008 != 0 }
}

/// Reads a zip archive from a file with positional reads: only the end records and the central
/// directory are held in memory, and entry data flows through fixed-size buffers.
///
/// Opening checks the structure up front: the end of central directory record (found within the
/// last 65,535 + 22 bytes), the ZIP64 records, every central directory header, every local
/// header (signature, name and method must agree with the central directory), and that no two
/// entries' bytes overlap (a "better zip bomb" reuses one compressed block for many entries;
/// Info-ZIP refuses these as "overlapped components"). Not thread-safe: one reader, one task.
public final class ZipReader {
    /// The archive's path.
    public let path: String
    /// The archive's name, for messages.
    public let archive: String
    public let fileSize: UInt64
    /// The entries, in central directory order.
    public private(set) var entries: [ZipEntry] = []
    /// Bytes per read of entry data.
    public static let bufferSize = 64 * 1024

    private let fd: Int32
    private var centralDirectoryOffset: UInt64 = 0

    /// Entries read at most: the central directory is held in memory, entry by entry.
    private let maxEntries: Int

    /// Opens the archive at `path` and reads its central directory.
    /// - Parameters:
    ///   - archiveName: how messages name the archive (default: `path`).
    ///   - maxEntries: more entries are refused as they are found, before they take memory (a
    ///     crafted central directory of ten million entries took gigabytes, then was refused).
    /// - Throws: `.io` when the file cannot be opened, `.corrupt` for a broken structure,
    ///   `.unsupported` for multi-disk archives, `.limit` beyond `maxEntries`.
    public init(path: String, archiveName: String? = nil, maxEntries: Int = .max) throws(ArchiveError) {
        self.path = path
        self.archive = archiveName ?? path
        self.maxEntries = maxEntries
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .io(path: path, errno: errno, detail: "cannot open the archive: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw .io(path: path, errno: code, detail: "cannot read the archive's size: \(String(cString: strerror(code)))")
        }
        fileSize = UInt64(max(st.st_size, 0))
        try readCentralDirectory()
        try checkLocalHeaders()
    }

    deinit { close(fd) }

    // MARK: - Positional reads

    /// Reads exactly `count` bytes at `offset`, or fails naming `what` (a record, an entry's data).
    private func bytes(at offset: UInt64, count: Int, _ what: String, entry: String? = nil) throws(ArchiveError) -> [UInt8] {
        guard count >= 0, offset <= fileSize, UInt64(count) <= fileSize - offset else {
            throw .corrupt(archive: archive, entry: entry,
                           detail: "the \(what) at offset \(offset) runs past the end of the file (\(fileSize) bytes); the archive is truncated")
        }
        var result = [UInt8](repeating: 0, count: count)
        let ok = result.withUnsafeMutableBytes { buffer in fill(buffer, at: offset) }
        guard ok else {
            throw .io(path: path, errno: errno, detail: "cannot read the \(what) at offset \(offset): \(String(cString: strerror(errno)))")
        }
        return result
    }

    /// Fills `buffer` from `offset`; false on a read error or an early end of file.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                if n == 0 { errno = EIO }
                return false
            }
            done += n
        }
        return true
    }

    // MARK: - End records and central directory

    /// Whether the central directory's first header is `lead` bytes past where the end record
    /// says it starts (and not there): an archive with something in front of it.
    private static func isShifted(_ offset: UInt64, by lead: UInt64, _ fill: (UnsafeMutableRawBufferPointer, UInt64) -> Bool) -> Bool {
        let signature: [UInt8] = [0x50, 0x4B, 0x01, 0x02]
        func bytes(at position: UInt64) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: 4)
            return out.withUnsafeMutableBytes { fill($0, position) } ? out : nil
        }
        return bytes(at: offset) != signature && bytes(at: offset + lead) == signature
    }

    private func readCentralDirectory() throws(ArchiveError) {
        let eocdSize = ZipEndOfCentralDirectory.size
        guard fileSize >= UInt64(eocdSize) else {
            throw .corrupt(archive: archive, entry: nil,
                           detail: "the file is \(fileSize) bytes, too short for a zip archive (no end of central directory record)")
        }
        // The end record is followed only by its comment (at most 65,535 bytes); read enough
        // to also hold the ZIP64 locator that precedes it.
        let tailLength = Int(min(fileSize, UInt64(0xFFFF + eocdSize + Zip64EndOfCentralDirectoryLocator.size)))
        let tailStart = fileSize - UInt64(tailLength)
        let tail = try bytes(at: tailStart, count: tailLength, "end of the archive")

        // Scan back for the signature. Prefer a record whose comment ends exactly at the end of
        // the file (a signature inside a comment does not fool it); else take the last one, as
        // Python and Info-ZIP do, which accepts a comment cut short.
        var exact: Int?
        var nearest: Int?
        var index = tailLength - eocdSize
        let lowest = max(0, tailLength - (0xFFFF + eocdSize))
        while index >= lowest {
            if tail[index] == 0x50, tail[index + 1] == 0x4b, tail[index + 2] == 0x05, tail[index + 3] == 0x06 {
                if nearest == nil { nearest = index }
                let commentLength = Int(tail[index + 20]) | Int(tail[index + 21]) << 8
                if index + eocdSize + commentLength == tailLength {
                    exact = index
                    break
                }
            }
            index -= 1
        }
        guard let eocdIndex = exact ?? nearest else {
            throw .corrupt(archive: archive, entry: nil,
                           detail: "no end of central directory record in the last \(tailLength) bytes; this is not a zip archive, or it is truncated")
        }
        let eocdPosition = tailStart + UInt64(eocdIndex)
        let eocd = try ZipEndOfCentralDirectory.parse(tail, offset: eocdIndex, archive: archive, position: eocdPosition)

        var totalEntries = UInt64(eocd.totalEntries)
        var cdSize = UInt64(eocd.centralDirectorySize)
        var cdOffset = UInt64(eocd.centralDirectoryOffset)
        var endOfCentralDirectoryArea = eocdPosition
        var isZip64 = false

        if let locator = Zip64EndOfCentralDirectoryLocator.parseIfPresent(tail, offset: eocdIndex - Zip64EndOfCentralDirectoryLocator.size) {
            guard locator.diskWithZip64EndOfCentralDirectory == 0, locator.totalNumberOfDisks <= 1 else {
                throw .unsupported(archive: archive, entry: nil, detail: "multi-disk (split or spanned) zip archives are not supported")
            }
            let locatorPosition = eocdPosition - UInt64(Zip64EndOfCentralDirectoryLocator.size)
            let recordOffset = locator.zip64EndOfCentralDirectoryOffset
            guard recordOffset <= locatorPosition, locatorPosition - recordOffset >= UInt64(Zip64EndOfCentralDirectory.size) else {
                throw .corrupt(archive: archive, entry: nil,
                               detail: "the ZIP64 locator at offset \(locatorPosition) points to offset \(recordOffset), where no ZIP64 end of central directory record fits")
            }
            let record = try Zip64EndOfCentralDirectory.parse(
                try bytes(at: recordOffset, count: Zip64EndOfCentralDirectory.size, "ZIP64 end of central directory record"),
                archive: archive, position: recordOffset)
            guard record.numberOfThisDisk == 0, record.diskWhereCentralDirectoryStarts == 0,
                  record.entriesOnThisDisk == record.totalEntries else {
                throw .unsupported(archive: archive, entry: nil, detail: "multi-disk (split or spanned) zip archives are not supported")
            }
            totalEntries = record.totalEntries
            cdSize = record.centralDirectorySize
            cdOffset = record.centralDirectoryOffset
            endOfCentralDirectoryArea = recordOffset
            isZip64 = true
        } else {
            // Without a locator, saturated fields are taken at face value: an archive with
            // exactly 65,535 entries needs no ZIP64 records.
            guard eocd.numberOfThisDisk == 0, eocd.diskWhereCentralDirectoryStarts == 0,
                  eocd.entriesOnThisDisk == eocd.totalEntries else {
                throw .unsupported(archive: archive, entry: nil, detail: "multi-disk (split or spanned) zip archives are not supported")
            }
        }

        let (cdEnd, overflow) = cdOffset.addingReportingOverflow(cdSize)
        guard !overflow, cdEnd <= endOfCentralDirectoryArea else {
            let hint = !isZip64 && (eocd.centralDirectoryOffset == 0xFFFF_FFFF || eocd.centralDirectorySize == 0xFFFF_FFFF)
                ? " (the end record's fields are saturated but there is no ZIP64 locator)" : ""
            throw .corrupt(archive: archive, entry: nil,
                           detail: "the central directory (offset \(cdOffset), \(cdSize) bytes) does not end before the end record at offset \(endOfCentralDirectoryArea)\(hint); the archive is truncated or damaged")
        }
        // The central directory ends where the end record starts. When it ends earlier by
        // exactly the bytes of something in front (a self-extracting stub, a script header),
        // every offset in the archive is off by as much: say that, not what it breaks first.
        if !isZip64, cdEnd < endOfCentralDirectoryArea, cdSize >= 4, Self.isShifted(cdOffset, by: endOfCentralDirectoryArea - cdEnd, fill) {
            let lead = endOfCentralDirectoryArea - cdEnd
            throw .unsupported(archive: archive, entry: nil,
                               detail: "\(lead) bytes come before the zip archive itself (a self-extracting stub or a script header?); syncr unpacks only a plain zip: remove them (zip -J does) or fetch the plain archive")
        }
        centralDirectoryOffset = cdOffset
        if totalEntries > UInt64(maxEntries) {
            throw .limit(archive: archive, entry: nil, detail: "more than \(maxEntries) entries (\(totalEntries))")
        }

        // Read the central directory in pieces: memory holds the entries, not the raw bytes.
        var window: [UInt8] = []
        var windowStart = cdOffset
        var position = cdOffset
        var list: [ZipEntry] = []
        list.reserveCapacity(Int(min(totalEntries, cdSize / UInt64(ZipCentralDirectoryHeader.size))))
        func ensure(_ count: Int) throws(ArchiveError) -> Int {
            let have = Int(windowStart + UInt64(window.count) - position)
            if have < count {
                guard UInt64(count) <= cdEnd - position else {
                    throw .corrupt(archive: archive, entry: nil,
                                   detail: "the central directory file header at offset \(position) runs past the end of the central directory (offset \(cdEnd))")
                }
                let length = Int(min(cdEnd - position, UInt64(max(count, 256 * 1024))))
                window = try bytes(at: position, count: length, "central directory")
                windowStart = position
            }
            return Int(position - windowStart)
        }
        while position < cdEnd {
            // The end record may understate the count (some writers keep it modulo 65,536).
            if list.count == maxEntries {
                throw .limit(archive: archive, entry: nil, detail: "more than \(maxEntries) entries")
            }
            var offset = try ensure(ZipCentralDirectoryHeader.size)
            let length = ZipCentralDirectoryHeader.recordLength(window, offset: offset) ?? ZipCentralDirectoryHeader.size
            offset = try ensure(length)
            let header = try ZipCentralDirectoryHeader.parse(window, offset: offset, archive: archive, position: position)
            list.append(try entry(from: header, at: position))
            position += UInt64(length)
        }
        // Some writers store the count modulo 65,536 when they do not write ZIP64 records.
        let countMatches = UInt64(list.count) == totalEntries || (!isZip64 && UInt64(list.count) & 0xFFFF == totalEntries)
        guard countMatches else {
            throw .corrupt(archive: archive, entry: nil,
                           detail: "the central directory holds \(list.count) entries, the end record says \(totalEntries)")
        }
        entries = list
    }

    /// Builds an entry from its central directory header, resolving ZIP64 values.
    private func entry(from header: ZipCentralDirectoryHeader, at position: UInt64) throws(ArchiveError) -> ZipEntry {
        let utf8Flag = header.generalPurposeBitFlag & 0x0800 != 0
        guard let name = ZipText.decodeName(header.fileName, utf8Flag: utf8Flag) else {
            throw .corrupt(archive: archive, entry: CP437.decode(header.fileName),
                           detail: "the name is flagged as UTF-8 (bit 11) but is not valid UTF-8 (central directory header at offset \(position))")
        }
        guard let extras = ZipExtraField.parseAll(header.extraField) else {
            throw .corrupt(archive: archive, entry: name, detail: "the extra field of the central directory header at offset \(position) is malformed")
        }
        var uncompressed = UInt64(header.uncompressedSize)
        var compressed = UInt64(header.compressedSize)
        var localOffset = UInt64(header.relativeOffsetOfLocalHeader)
        var disk = UInt32(header.diskNumberStart)
        let needs = (header.uncompressedSize == 0xFFFF_FFFF, header.compressedSize == 0xFFFF_FFFF,
                     header.relativeOffsetOfLocalHeader == 0xFFFF_FFFF, header.diskNumberStart == 0xFFFF)
        if needs.0 || needs.1 || needs.2 || needs.3 {
            guard let field = extras.first(where: { $0.headerID == Zip64ExtendedInformation.headerID }),
                  let info = Zip64ExtendedInformation.parse(field.data, needsUncompressed: needs.0, needsCompressed: needs.1,
                                                            needsOffset: needs.2, needsDisk: needs.3) else {
                throw .corrupt(archive: archive, entry: name,
                               detail: "the central directory header at offset \(position) has saturated (0xFFFFFFFF) fields but no ZIP64 extended information extra field holding them")
            }
            uncompressed = info.uncompressedSize ?? uncompressed
            compressed = info.compressedSize ?? compressed
            localOffset = info.relativeOffsetOfLocalHeader ?? localOffset
            disk = info.diskStartNumber ?? disk
        }
        guard disk == 0 else {
            throw .unsupported(archive: archive, entry: name, detail: "multi-disk (split or spanned) zip archives are not supported")
        }

        // Hosts whose external attributes carry a Unix mode in the high 16 bits: 3 Unix, 19 OS X.
        let host = header.versionMadeBy >> 8
        let mode = UInt16(truncatingIfNeeded: header.externalFileAttributes >> 16)
        let unixMode: UInt16? = (host == 3 || host == 19) && mode != 0 ? mode : nil
        let type = (unixMode ?? 0) & 0o170000
        let isDirectory = name.hasSuffix("/") || (type == 0o040000 && uncompressed == 0)
        let isSymlink = !isDirectory && type == 0o120000

        var modificationTime = Self.dosTime(date: header.lastModFileDate, time: header.lastModFileTime)
        // The extended timestamp, when there is one, is UTC and exact to the second; the DOS
        // time is local to wherever the archive was made, in two-second steps.
        if let ut = extras.first(where: { $0.headerID == ZipExtendedTimestamp.headerID }),
           let stamp = ZipExtendedTimestamp.parse(ut.data) {
            modificationTime = Int64(stamp.modificationTime)
        }
        return ZipEntry(name: name, rawName: header.fileName, isDirectory: isDirectory, isSymlink: isSymlink,
                        unixMode: unixMode, crc32: header.crc32, compressedSize: compressed, uncompressedSize: uncompressed,
                        compressionMethod: header.compressionMethod, generalPurposeBitFlag: header.generalPurposeBitFlag,
                        versionMadeBy: header.versionMadeBy, externalFileAttributes: header.externalFileAttributes,
                        localHeaderOffset: localOffset, modificationTime: modificationTime, dataOffset: 0)
    }

    /// MS-DOS date and time (APPNOTE 4.4.6) as local time, in seconds since 1970.
    static func dosTime(date: UInt16, time: UInt16) -> Int64 {
        var t = tm()
        t.tm_year = Int32(date >> 9) + 80
        t.tm_mon = max(Int32((date >> 5) & 0x0F), 1) - 1
        t.tm_mday = max(Int32(date & 0x1F), 1)
        t.tm_hour = Int32(time >> 11)
        t.tm_min = Int32((time >> 5) & 0x3F)
        t.tm_sec = Int32(time & 0x1F) * 2
        t.tm_isdst = -1
        return Int64(mktime(&t))
    }

    // MARK: - Local headers and overlap

    /// Reads every local header: it must be where the central directory says, carry the same
    /// name and method, and its data must end before the central directory. Then checks that no
    /// two entries share bytes.
    private func checkLocalHeaders() throws(ArchiveError) {
        var spans: [(start: UInt64, end: UInt64, index: Int)] = []
        spans.reserveCapacity(entries.count)
        for index in entries.indices {
            let entry = entries[index]
            let offset = entry.localHeaderOffset
            let fixedAndName = ZipLocalFileHeader.size + entry.rawName.count
            guard offset < centralDirectoryOffset, centralDirectoryOffset - offset >= UInt64(fixedAndName) else {
                throw .corrupt(archive: archive, entry: entry.name,
                               detail: "the local header offset \(offset) does not leave room for the header before the central directory (offset \(centralDirectoryOffset))")
            }
            let raw = try bytes(at: offset, count: fixedAndName, "local file header", entry: entry.name)
            let local = try ZipLocalFileHeader.parse(raw, archive: archive, entry: entry.name, position: offset)
            guard Int(local.fileNameLength) == entry.rawName.count,
                  raw[ZipLocalFileHeader.size...].elementsEqual(entry.rawName) else {
                throw .corrupt(archive: archive, entry: entry.name,
                               detail: "the local header at offset \(offset) names a different entry than the central directory")
            }
            if local.compressionMethod != entry.compressionMethod {
                if !ZipMethodName.isReadable(local.compressionMethod) {
                    throw .unsupported(archive: archive, entry: entry.name,
                                       detail: ZipMethodName.refusal(local.compressionMethod, localHeader: true))
                }
                throw .corrupt(archive: archive, entry: entry.name,
                               detail: "the local header says compression \(ZipMethodName.text(local.compressionMethod)), "
                                   + "the central directory \(ZipMethodName.text(entry.compressionMethod))")
            }
            if local.generalPurposeBitFlag & 0x0041 != 0 && !entry.isEncrypted {
                throw .unsupported(archive: archive, entry: entry.name, detail: "encrypted entries are not supported")
            }
            let dataOffset = offset + UInt64(local.totalSize)
            let (dataEnd, overflow) = dataOffset.addingReportingOverflow(entry.compressedSize)
            guard !overflow, dataEnd <= centralDirectoryOffset else {
                throw .corrupt(archive: archive, entry: entry.name,
                               detail: "its data (offset \(dataOffset), \(entry.compressedSize) bytes) runs past the start of the central directory (offset \(centralDirectoryOffset)); the archive is truncated or damaged")
            }
            entries[index].dataOffset = dataOffset
            // A data descriptor is at least 12 bytes; count those as the entry's too.
            let end = entry.hasDataDescriptor ? min(dataEnd + 12, centralDirectoryOffset) : dataEnd
            spans.append((offset, end, index))
        }
        spans.sort { $0.start < $1.start }
        for i in spans.indices.dropFirst() where spans[i].start < spans[i - 1].end {
            let earlier = entries[spans[i - 1].index], later = entries[spans[i].index]
            throw .corrupt(archive: archive, entry: later.name,
                           detail: "its local header (offset \(spans[i].start)) lies inside the bytes of \(earlier.name) (offsets \(spans[i - 1].start)..<\(spans[i - 1].end)); overlapping entries are refused, as zip bombs use them")
        }
    }

    // MARK: - Entry data

    /// Streams an entry's uncompressed bytes to `sink` in pieces of at most `bufferSize`, then
    /// checks the CRC-32 and both sizes against the central directory (and the data descriptor).
    /// - Throws: `.unsupported` for encryption or a method other than stored (0) and deflated
    ///   (8); `.corrupt` for invalid compressed data; `.checksum` when CRC or size disagree;
    ///   whatever `sink` throws. The sink may have received bytes before a failure.
    public func read(_ entry: ZipEntry, into sink: (UnsafeRawBufferPointer) throws(ArchiveError) -> Void) throws(ArchiveError) {
        if entry.isEncrypted {
            throw .unsupported(archive: archive, entry: entry.name, detail: "encrypted entries are not supported")
        }
        guard ZipMethodName.isReadable(entry.compressionMethod) else {
            throw .unsupported(archive: archive, entry: entry.name, detail: ZipMethodName.refusal(entry.compressionMethod))
        }
        if entry.compressionMethod == 0 && entry.compressedSize != entry.uncompressedSize {
            throw .corrupt(archive: archive, entry: entry.name,
                           detail: "a stored entry of \(entry.compressedSize) bytes claims to unpack to \(entry.uncompressedSize)")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var crc = CRC32()
        var produced: UInt64 = 0
        let expected = entry.uncompressedSize
        let archive = self.archive
        func emit(_ piece: UnsafeRawBufferPointer) throws(ArchiveError) {
            produced += UInt64(piece.count)
            if produced > expected {
                throw .checksum(archive: archive, entry: entry.name,
                                detail: "the data unpacks to more than the \(expected) bytes the central directory records")
            }
            crc.update(piece)
            try sink(piece)
        }

        var inflater: Inflater?
        if entry.compressionMethod == 8 {
            do { inflater = try Inflater(.raw, bufferSize: Self.bufferSize) } catch {
                throw .corrupt(archive: archive, entry: entry.name, detail: "cannot start zlib: \(error)")
            }
        }
        var position = entry.dataOffset
        var remaining = entry.compressedSize
        while remaining > 0 {
            let count = Int(min(remaining, UInt64(buffer.count)))
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            guard fill(piece, at: position) else {
                throw .io(path: path, errno: errno, detail: "cannot read the data of \(entry.name) at offset \(position): \(String(cString: strerror(errno)))")
            }
            position += UInt64(count)
            remaining -= UInt64(count)
            guard let inflater else {
                try emit(UnsafeRawBufferPointer(piece))
                continue
            }
            let used: Int
            do {
                used = try inflater.feed(UnsafeRawBufferPointer(piece)) { out in try emit(out) }
            } catch let error as ArchiveError {
                throw error
            } catch {
                throw .corrupt(archive: archive, entry: entry.name, detail: "the compressed data is invalid (\(error))")
            }
            if inflater.finished && (used < count || remaining > 0) {
                throw .corrupt(archive: archive, entry: entry.name,
                               detail: "the deflate stream ends after \(inflater.totalIn) of the \(entry.compressedSize) stored bytes")
            }
        }
        if let inflater, !inflater.finished {
            throw .corrupt(archive: archive, entry: entry.name,
                           detail: "the deflate stream is cut short: it does not end within the \(entry.compressedSize) stored bytes")
        }
        guard produced == expected else {
            throw .checksum(archive: archive, entry: entry.name,
                            detail: "the data unpacks to \(produced) bytes, the central directory records \(expected)")
        }
        guard crc.value == entry.crc32 else {
            throw .checksum(archive: archive, entry: entry.name,
                            detail: "CRC-32 mismatch: the data has \(Self.hex(crc.value)), the central directory records \(Self.hex(entry.crc32))")
        }
        if entry.hasDataDescriptor {
            let dataEnd = entry.dataOffset + entry.compressedSize
            let available = Int(min(UInt64(ZipDataDescriptor.maximumSize), centralDirectoryOffset - dataEnd))
            let raw = try bytes(at: dataEnd, count: available, "data descriptor", entry: entry.name)
            let agrees = ZipDataDescriptor.candidates(raw).contains {
                $0.crc32 == entry.crc32 && $0.compressedSize == entry.compressedSize && $0.uncompressedSize == entry.uncompressedSize
            }
            guard agrees else {
                throw .checksum(archive: archive, entry: entry.name,
                                detail: "the data descriptor at offset \(dataEnd) does not agree with the central directory (CRC-32 \(Self.hex(entry.crc32)), \(entry.compressedSize) bytes stored, \(entry.uncompressedSize) unpacked)")
            }
        }
    }

    /// An entry's whole data, for small entries such as symbolic links.
    /// - Parameter limit: the most bytes accepted; larger entries are refused as corrupt.
    public func contents(of entry: ZipEntry, limit: Int = 64 * 1024) throws(ArchiveError) -> [UInt8] {
        guard entry.uncompressedSize <= UInt64(limit) else {
            throw .corrupt(archive: archive, entry: entry.name,
                           detail: "\(entry.uncompressedSize) bytes is too large for this entry (at most \(limit))")
        }
        var result: [UInt8] = []
        try read(entry) { piece throws(ArchiveError) in result.append(contentsOf: piece) }
        return result
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
