// The on-disk records the zip writer emits, one small struct each, named and laid out as in
// PKWARE's APPNOTE.TXT 6.3.x (section numbers in the comments). Every field is encoded
// explicitly little-endian, byte by byte, so nothing depends on the host's byte order or on
// Swift's struct layout.
//
// The reader has its own record types (ZipRecords.swift); these are the writer's, kept apart so
// the two could be written in parallel. A later cleanup may share them. They are nested in
// `ZipWriter` so that their names cannot clash with the reader's top-level record types.

extension ZipWriter {
    /// Appends little-endian integers and raw bytes to a byte array.
    struct LittleEndianWriter {
        var bytes: [UInt8] = []

        init(capacity: Int) {
            bytes.reserveCapacity(capacity)
        }

        mutating func u16(_ value: UInt16) {
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }

        mutating func u32(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }

        mutating func u64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        mutating func raw<C: Collection>(_ data: C) where C.Element == UInt8 {
            bytes.append(contentsOf: data)
        }
    }

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

    /// The ZIP64 extended information extra field, header ID 0x0001 (APPNOTE 4.5.3). Only the
    /// fields whose 32-bit counterpart is 0xFFFFFFFF are present, in this fixed order.
    struct Zip64ExtraField {
        static let headerID: UInt16 = 0x0001
        var uncompressedSize: UInt64?
        var compressedSize: UInt64?
        var localHeaderOffset: UInt64?

        var isEmpty: Bool { uncompressedSize == nil && compressedSize == nil && localHeaderOffset == nil }

        /// Header (4 bytes) plus 8 bytes per present field.
        var size: Int { isEmpty ? 0 : 4 + 8 * [uncompressedSize, compressedSize, localHeaderOffset].count { $0 != nil } }

        func encode(into w: inout LittleEndianWriter) {
            guard !isEmpty else { return }
            w.u16(Self.headerID)
            w.u16(UInt16(size - 4))
            if let uncompressedSize { w.u64(uncompressedSize) }
            if let compressedSize { w.u64(compressedSize) }
            if let localHeaderOffset { w.u64(localHeaderOffset) }
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
    }

    /// Local file header (APPNOTE 4.3.7), 30 bytes plus the name and extra field.
    struct LocalFileHeader {
        static let signature: UInt32 = 0x0403_4b50
        static let fixedSize = 30

        var versionNeededToExtract: UInt16
        var generalPurposeBitFlag: UInt16
        var compressionMethod: UInt16
        var lastModFileTime: UInt16
        var lastModFileDate: UInt16
        var crc32: UInt32
        var compressedSize: UInt32
        var uncompressedSize: UInt32
        var fileName: [UInt8]
        var zip64: Zip64ExtraField

        /// The header for `entry`. With `localZip64`, both sizes go to the ZIP64 extra field and the
        /// 32-bit fields hold 0xFFFFFFFF, as APPNOTE 4.5.3 requires of a local header; the header's
        /// length then does not depend on the final sizes, so it can be rewritten in place.
        init(_ entry: ZipEntryRecord) {
            versionNeededToExtract = entry.localZip64 ? ZipConstants.versionZip64
                : entry.method == .deflated || entry.isDirectory ? ZipConstants.versionDeflateOrFolder : ZipConstants.versionStored
            generalPurposeBitFlag = ZipConstants.flagUTF8
            compressionMethod = entry.method.rawValue
            lastModFileTime = entry.modified.time
            lastModFileDate = entry.modified.date
            crc32 = entry.crc32
            fileName = entry.name
            if entry.localZip64 {
                compressedSize = UInt32.max
                uncompressedSize = UInt32.max
                zip64 = Zip64ExtraField(uncompressedSize: entry.uncompressedSize, compressedSize: entry.compressedSize)
            } else {
                // The caller checked both fit (`ZipWriter` refuses otherwise): truncation cannot happen.
                compressedSize = UInt32(truncatingIfNeeded: entry.compressedSize)
                uncompressedSize = UInt32(truncatingIfNeeded: entry.uncompressedSize)
                zip64 = Zip64ExtraField()
            }
        }

        var size: Int { Self.fixedSize + fileName.count + zip64.size }

        func encoded() -> [UInt8] {
            var w = LittleEndianWriter(capacity: size)
            w.u32(Self.signature)
            w.u16(versionNeededToExtract)
            w.u16(generalPurposeBitFlag)
            w.u16(compressionMethod)
            w.u16(lastModFileTime)
            w.u16(lastModFileDate)
            w.u32(crc32)
            w.u32(compressedSize)
            w.u32(uncompressedSize)
            w.u16(UInt16(fileName.count))
            w.u16(UInt16(zip64.size))
            w.raw(fileName)
            zip64.encode(into: &w)
            return w.bytes
        }
    }

    /// Central directory file header (APPNOTE 4.3.12), 46 bytes plus name and extra field.
    struct CentralDirectoryHeader {
        static let signature: UInt32 = 0x0201_4b50
        static let fixedSize = 46

        var versionMadeBy: UInt16
        var versionNeededToExtract: UInt16
        var generalPurposeBitFlag: UInt16
        var compressionMethod: UInt16
        var lastModFileTime: UInt16
        var lastModFileDate: UInt16
        var crc32: UInt32
        var compressedSize: UInt32
        var uncompressedSize: UInt32
        var diskNumberStart: UInt16 = 0
        var internalFileAttributes: UInt16 = 0
        var externalFileAttributes: UInt32
        var relativeOffsetOfLocalHeader: UInt32
        var fileName: [UInt8]
        var zip64: Zip64ExtraField

        /// The central record for `entry`: a ZIP64 field holds exactly the values that do not fit.
        init(_ entry: ZipEntryRecord) {
            var zip64 = Zip64ExtraField()
            func field(_ value: UInt64, _ slot: WritableKeyPath<Zip64ExtraField, UInt64?>) -> UInt32 {
                if value >= ZipConstants.max32 {
                    zip64[keyPath: slot] = value
                    return UInt32.max
                }
                return UInt32(value)
            }
            uncompressedSize = field(entry.uncompressedSize, \.uncompressedSize)
            compressedSize = field(entry.compressedSize, \.compressedSize)
            relativeOffsetOfLocalHeader = field(entry.localHeaderOffset, \.localHeaderOffset)
            self.zip64 = zip64
            versionMadeBy = ZipConstants.versionMadeBy
            versionNeededToExtract = !zip64.isEmpty || entry.localZip64 ? ZipConstants.versionZip64
                : entry.method == .deflated || entry.isDirectory ? ZipConstants.versionDeflateOrFolder : ZipConstants.versionStored
            generalPurposeBitFlag = ZipConstants.flagUTF8
            compressionMethod = entry.method.rawValue
            lastModFileTime = entry.modified.time
            lastModFileDate = entry.modified.date
            crc32 = entry.crc32
            // Unix mode in the high half; MS-DOS directory attribute (0x10) in the low byte for
            // folders, as Info-ZIP writes it.
            externalFileAttributes = (entry.mode << 16) | (entry.isDirectory ? 0x10 : 0)
            fileName = entry.name
        }

        var size: Int { Self.fixedSize + fileName.count + zip64.size }

        func encode(into w: inout LittleEndianWriter) {
            w.u32(Self.signature)
            w.u16(versionMadeBy)
            w.u16(versionNeededToExtract)
            w.u16(generalPurposeBitFlag)
            w.u16(compressionMethod)
            w.u16(lastModFileTime)
            w.u16(lastModFileDate)
            w.u32(crc32)
            w.u32(compressedSize)
            w.u32(uncompressedSize)
            w.u16(UInt16(fileName.count))
            w.u16(UInt16(zip64.size))
            w.u16(0) // file comment length
            w.u16(diskNumberStart)
            w.u16(internalFileAttributes)
            w.u32(externalFileAttributes)
            w.u32(relativeOffsetOfLocalHeader)
            w.raw(fileName)
            zip64.encode(into: &w)
        }
    }

    /// Zip64 end of central directory record (APPNOTE 4.3.14), 56 bytes (version 1, no extensible
    /// data).
    struct Zip64EndOfCentralDirectoryRecord {
        static let signature: UInt32 = 0x0606_4b50
        static let size = 56

        var entries: UInt64
        var centralDirectorySize: UInt64
        var centralDirectoryOffset: UInt64

        func encode(into w: inout LittleEndianWriter) {
            w.u32(Self.signature)
            w.u64(UInt64(Self.size - 12)) // size of the record after this field (APPNOTE 4.3.14.1)
            w.u16(ZipConstants.versionMadeBy)
            w.u16(ZipConstants.versionZip64)
            w.u32(0) // number of this disk
            w.u32(0) // disk with the start of the central directory
            w.u64(entries) // entries on this disk
            w.u64(entries) // entries in total
            w.u64(centralDirectorySize)
            w.u64(centralDirectoryOffset)
        }
    }

    /// Zip64 end of central directory locator (APPNOTE 4.3.15), 20 bytes.
    struct Zip64EndOfCentralDirectoryLocator {
        static let signature: UInt32 = 0x0706_4b50
        static let size = 20

        var zip64RecordOffset: UInt64

        func encode(into w: inout LittleEndianWriter) {
            w.u32(Self.signature)
            w.u32(0) // disk with the ZIP64 end record
            w.u64(zip64RecordOffset)
            w.u32(1) // total number of disks
        }
    }

    /// End of central directory record (APPNOTE 4.3.16), 22 bytes without a comment. Fields that
    /// overflow hold their all-ones value and the ZIP64 records carry the truth.
    struct EndOfCentralDirectoryRecord {
        static let signature: UInt32 = 0x0605_4b50
        static let size = 22

        var entries: UInt64
        var centralDirectorySize: UInt64
        var centralDirectoryOffset: UInt64

        /// Whether the ZIP64 end records are needed: an entry count that reaches 0xFFFF (that value
        /// itself is the "see ZIP64" marker) or a size or offset that reaches 0xFFFFFFFF.
        var needsZip64: Bool {
            entries >= ZipConstants.max16 || centralDirectorySize >= ZipConstants.max32
                || centralDirectoryOffset >= ZipConstants.max32
        }

        func encode(into w: inout LittleEndianWriter) {
            let count = UInt16(truncatingIfNeeded: min(entries, ZipConstants.max16))
            w.u32(Self.signature)
            w.u16(0) // number of this disk
            w.u16(0) // disk with the start of the central directory
            w.u16(count)
            w.u16(count)
            w.u32(UInt32(truncatingIfNeeded: min(centralDirectorySize, ZipConstants.max32)))
            w.u32(UInt32(truncatingIfNeeded: min(centralDirectoryOffset, ZipConstants.max32)))
            w.u16(0) // comment length
        }
    }
}
