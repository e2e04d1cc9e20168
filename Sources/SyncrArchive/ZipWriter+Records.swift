// What the zip writer puts in each on-disk record: its constants (versions, flags, the
// saturation values of APPNOTE 4.4.8, 4.4.9, 4.4.16), the DOS time stamp, and the rules that
// turn one entry's `ZipEntryRecord` into the records of ZipRecords.swift (which alone lay out the
// fields, for the reader and the writer both): where ZIP64 and extended timestamp extra fields
// go, which version a record needs, and when the ZIP64 end records are written.

extension ZipWriter {
    /// Constants shared by the records.
    enum ZipConstants {
        /// The largest value a 32-bit size or offset field holds; this value itself means "see the
        /// ZIP64 extra field" (APPNOTE 4.4.8, 4.4.9, 4.4.16).
        static let max32: UInt64 = 0xFFFF_FFFF
        /// The largest entry count the end of central directory record holds; this value itself
        /// means "see the ZIP64 end record" (APPNOTE 4.4.21, 4.4.22).
        static let max16: UInt64 = 0xFFFF
        /// General purpose bit 11: the name is UTF-8 (APPNOTE 4.4.4, appendix D).
        static let flagUTF8: UInt16 = 1 << 11
        /// `version made by`: upper byte 3 = Unix (so external attributes carry `st_mode << 16`),
        /// lower byte 63 = APPNOTE 6.3 (APPNOTE 4.4.2).
        static let versionMadeBy: UInt16 = (3 << 8) | 63
        /// 1.0: stored data; 2.0: deflate or a folder; 4.5: ZIP64 (APPNOTE 4.4.3.2).
        static let versionStored: UInt16 = 10
        static let versionDeflateOrFolder: UInt16 = 20
        static let versionZip64: UInt16 = 45
    }

    /// Compression method (APPNOTE 4.4.5).
    enum ZipMethod: UInt16, Sendable {
        case stored = 0
        case deflated = 8
    }

    /// A date and time in MS-DOS form, as the headers store it (APPNOTE 4.4.6): seconds in units
    /// of two, years from 1980 to 2107.
    struct DOSDateTime: Equatable, Sendable {
        var time: UInt16
        var date: UInt16

        /// 1980-01-01 00:00:00, the earliest time the format holds; used for deterministic archives.
        static let epoch = DOSDateTime(time: 0, date: (1 << 5) | 1)

        /// Converts a broken-down time; out-of-range years are clamped to the representable span.
        init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            if year < 1980 {
                self = .epoch
                return
            }
            if year > 2107 {
                self.init(time: UInt16((23 << 11) | (59 << 5) | 29), date: UInt16((127 << 9) | (12 << 5) | 31))
                return
            }
            self.init(time: UInt16((hour << 11) | (minute << 5) | (min(second, 59) / 2)),
                      date: UInt16(((year - 1980) << 9) | (month << 5) | day))
        }

        init(time: UInt16, date: UInt16) {
            self.time = time
            self.date = date
        }
    }

    /// What every header says about one entry; the local and central records are built from it.
    struct ZipEntryRecord: Sendable {
        var name: [UInt8]
        var method: ZipMethod
        var modified: DOSDateTime
        var crc32: UInt32
        var compressedSize: UInt64
        var uncompressedSize: UInt64
        var localHeaderOffset: UInt64
        /// The full `st_mode` (type and permission bits).
        var mode: UInt32
        var isDirectory: Bool
        /// The local header was written with a ZIP64 extra field holding both sizes (decided before
        /// the data was written, from the size known up front).
        var localZip64: Bool
        /// The modification time (seconds since 1970, UTC) both headers state in an extended
        /// timestamp extra field; nil for none. It is fixed before the local header is first
        /// written, so the header keeps its length when it is rewritten.
        var utcModified: Int32? = nil
    }
}

extension ZipWriter.ZipEntryRecord {
    private typealias Constants = ZipWriter.ZipConstants

    /// 4.5 when the record carries ZIP64 values, else 2.0 for deflate or a folder, 1.0 otherwise.
    private func versionNeededToExtract(zip64: Bool) -> UInt16 {
        zip64 ? Constants.versionZip64
            : method == .deflated || isDirectory ? Constants.versionDeflateOrFolder : Constants.versionStored
    }

    /// The extended timestamp extra field, or nothing. It follows any ZIP64 field (readers find
    /// fields by their ID; this is the order other writers use).
    private var timestampField: [UInt8] {
        utcModified.map { ZipExtendedTimestamp(modificationTime: $0).serialize() } ?? []
    }

    /// The local file header (APPNOTE 4.3.7) with the name and extra field. With `localZip64`,
    /// both sizes go to a ZIP64 extra field and the 32-bit fields hold 0xFFFFFFFF, as APPNOTE
    /// 4.5.3 requires of a local header; the header's length then does not depend on the final
    /// sizes, so it can be rewritten in place.
    func localFileHeader() -> [UInt8] {
        let zip64 = localZip64
            ? Zip64ExtendedInformation(uncompressedSize: uncompressedSize, compressedSize: compressedSize).serialize() : []
        let extra = zip64 + timestampField
        // Without `localZip64` the caller checked both sizes fit (`ZipWriter` refuses otherwise):
        // truncation cannot happen. The scanner refuses names over 0xFFFF bytes.
        let header = ZipLocalFileHeader(
            versionNeededToExtract: versionNeededToExtract(zip64: localZip64), generalPurposeBitFlag: Constants.flagUTF8,
            compressionMethod: method.rawValue, lastModFileTime: modified.time, lastModFileDate: modified.date,
            crc32: crc32, compressedSize: localZip64 ? .max : UInt32(truncatingIfNeeded: compressedSize),
            uncompressedSize: localZip64 ? .max : UInt32(truncatingIfNeeded: uncompressedSize),
            fileNameLength: UInt16(name.count), extraFieldLength: UInt16(extra.count))
        var w = LittleEndianWriter(capacity: header.totalSize)
        header.append(to: &w)
        w.append(name)
        w.append(extra)
        return w.bytes
    }

    /// The central record's ZIP64 values: exactly those that do not fit their 32-bit fields.
    var centralZip64: Zip64ExtendedInformation {
        func overflow(_ value: UInt64) -> UInt64? { value >= Constants.max32 ? value : nil }
        return Zip64ExtendedInformation(uncompressedSize: overflow(uncompressedSize), compressedSize: overflow(compressedSize),
                                        relativeOffsetOfLocalHeader: overflow(localHeaderOffset))
    }

    /// Whether the local or the central header carries a ZIP64 extra field.
    var usesZip64: Bool { localZip64 || !centralZip64.isEmpty }

    /// The central directory file header (APPNOTE 4.3.12); a ZIP64 extra field holds exactly the
    /// values that do not fit, and their 32-bit fields hold 0xFFFFFFFF. The extended timestamp
    /// is the local header's: Info-ZIP requires the central one whenever the local one has a
    /// modification time.
    func centralDirectoryHeader() -> ZipCentralDirectoryHeader {
        let zip64 = centralZip64
        func field(_ value: UInt64) -> UInt32 { value >= Constants.max32 ? .max : UInt32(value) }
        // Unix mode in the high half; MS-DOS directory attribute (0x10) in the low byte for
        // folders, as Info-ZIP writes it.
        return ZipCentralDirectoryHeader(
            versionMadeBy: Constants.versionMadeBy, versionNeededToExtract: versionNeededToExtract(zip64: usesZip64),
            generalPurposeBitFlag: Constants.flagUTF8, compressionMethod: method.rawValue,
            lastModFileTime: modified.time, lastModFileDate: modified.date, crc32: crc32,
            compressedSize: field(compressedSize), uncompressedSize: field(uncompressedSize),
            externalFileAttributes: (mode << 16) | (isDirectory ? 0x10 : 0),
            relativeOffsetOfLocalHeader: field(localHeaderOffset), fileName: name,
            extraField: (zip64.isEmpty ? [] : zip64.serialize()) + timestampField)
    }
}

extension ZipWriter {
    /// What the end records say: the entry count and where the central directory lies. Fields
    /// that overflow the end of central directory record (APPNOTE 4.3.16) hold their all-ones
    /// value and the ZIP64 end records (4.3.14, 4.3.15) carry the truth.
    struct EndRecords {
        var entries: UInt64
        var centralDirectorySize: UInt64
        var centralDirectoryOffset: UInt64

        /// Whether the ZIP64 end records are needed: an entry count that reaches 0xFFFF (that value
        /// itself is the "see ZIP64" marker) or a size or offset that reaches 0xFFFFFFFF.
        var needsZip64: Bool {
            entries >= ZipConstants.max16 || centralDirectorySize >= ZipConstants.max32
                || centralDirectoryOffset >= ZipConstants.max32
        }

        /// Appends the ZIP64 end record and locator when needed (the record to be written at
        /// `position`), then the end of central directory record.
        func append(to w: inout LittleEndianWriter, at position: UInt64) {
            if needsZip64 {
                // Version 1, no extensible data: the record is 56 bytes, 44 after its size field.
                Zip64EndOfCentralDirectory(
                    sizeOfRecord: UInt64(Zip64EndOfCentralDirectory.size - 12), versionMadeBy: ZipConstants.versionMadeBy,
                    versionNeededToExtract: ZipConstants.versionZip64, entriesOnThisDisk: entries, totalEntries: entries,
                    centralDirectorySize: centralDirectorySize, centralDirectoryOffset: centralDirectoryOffset
                ).append(to: &w)
                Zip64EndOfCentralDirectoryLocator(zip64EndOfCentralDirectoryOffset: position).append(to: &w)
            }
            let count = UInt16(truncatingIfNeeded: min(entries, ZipConstants.max16))
            ZipEndOfCentralDirectory(
                entriesOnThisDisk: count, totalEntries: count,
                centralDirectorySize: UInt32(truncatingIfNeeded: min(centralDirectorySize, ZipConstants.max32)),
                centralDirectoryOffset: UInt32(truncatingIfNeeded: min(centralDirectoryOffset, ZipConstants.max32))
            ).append(to: &w)
        }
    }
}
