// The on-disk records of a zip archive, APPNOTE.TXT 6.3.10 section 4.3, with field names from
// section 4.4. Each record is a small value with a fixed `size` (the part before any
// variable-length fields), decoded from and encoded to little-endian bytes explicitly, byte by
// byte, so the code does not depend on the host's byte order or on alignment. The reader uses
// the `parse` side, the writer (`ZipWriter+Records.swift`) the `append(to:)` side: each
// record's field layout is written down here once.

/// Reads little-endian integers from a byte array, refusing to read past its end.
struct LittleEndianReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    /// Whether `count` more bytes can be read.
    func has(_ count: Int) -> Bool { count >= 0 && remaining >= count }

    // Callers check `has` first; these return 0 rather than trap if they did not.
    mutating func u8() -> UInt8 {
        guard has(1) else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16 {
        guard has(2) else { return 0 }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func u32() -> UInt32 {
        guard has(4) else { return 0 }
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    mutating func u64() -> UInt64 {
        let low = UInt64(u32())
        let high = UInt64(u32())
        return low | high << 32
    }

    mutating func take(_ count: Int) -> [UInt8] {
        guard has(count) else { return [] }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

/// Appends little-endian integers to a byte array.
struct LittleEndianWriter {
    private(set) var bytes: [UInt8] = []

    init() {}

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

    mutating func append<C: Collection>(_ raw: C) where C.Element == UInt8 { bytes.append(contentsOf: raw) }

    /// The bytes `encode` appends to an empty writer.
    static func bytes(_ encode: (inout LittleEndianWriter) -> Void) -> [UInt8] {
        var w = LittleEndianWriter()
        encode(&w)
        return w.bytes
    }

    /// Empties the buffer, keeping its storage, once its bytes have been written out.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }
}

/// Fails with `.corrupt` naming the record when fewer than `count` bytes are left.
private func need(_ reader: LittleEndianReader, _ count: Int, _ record: String, archive: String,
                  entry: String? = nil, at position: UInt64) throws(ArchiveError) {
    guard reader.has(count) else {
        throw .corrupt(archive: archive, entry: entry,
                       detail: "the \(record) at offset \(position) is cut short (\(count) bytes needed, \(max(reader.remaining, 0)) there)")
    }
}

/// Fails with `.corrupt` when the next four bytes are not `signature`.
private func expectSignature(_ reader: inout LittleEndianReader, _ signature: UInt32, _ record: String,
                             archive: String, entry: String? = nil, at position: UInt64) throws(ArchiveError) {
    let found = reader.u32()
    guard found == signature else {
        throw .corrupt(archive: archive, entry: entry,
                       detail: "no \(record) signature at offset \(position) (found 0x\(String(found, radix: 16)))")
    }
}

/// End of central directory record (APPNOTE 4.3.16), the last record of every zip archive.
public struct ZipEndOfCentralDirectory: Sendable, Equatable {
    public static let signature: UInt32 = 0x0605_4b50
    /// Bytes before the comment.
    public static let size = 22

    public var numberOfThisDisk: UInt16
    public var diskWhereCentralDirectoryStarts: UInt16
    public var entriesOnThisDisk: UInt16
    public var totalEntries: UInt16
    public var centralDirectorySize: UInt32
    public var centralDirectoryOffset: UInt32
    public var commentLength: UInt16

    public init(numberOfThisDisk: UInt16 = 0, diskWhereCentralDirectoryStarts: UInt16 = 0, entriesOnThisDisk: UInt16,
                totalEntries: UInt16, centralDirectorySize: UInt32, centralDirectoryOffset: UInt32, commentLength: UInt16 = 0) {
        self.numberOfThisDisk = numberOfThisDisk
        self.diskWhereCentralDirectoryStarts = diskWhereCentralDirectoryStarts
        self.entriesOnThisDisk = entriesOnThisDisk
        self.totalEntries = totalEntries
        self.centralDirectorySize = centralDirectorySize
        self.centralDirectoryOffset = centralDirectoryOffset
        self.commentLength = commentLength
    }

    /// Decodes the record at `offset` in `bytes` (which lie at `position` in the archive).
    public static func parse(_ bytes: [UInt8], offset: Int = 0, archive: String, position: UInt64) throws(ArchiveError) -> Self {
        var r = LittleEndianReader(bytes, offset: offset)
        try need(r, size, "end of central directory record", archive: archive, at: position)
        try expectSignature(&r, signature, "end of central directory record", archive: archive, at: position)
        return Self(numberOfThisDisk: r.u16(), diskWhereCentralDirectoryStarts: r.u16(), entriesOnThisDisk: r.u16(),
                    totalEntries: r.u16(), centralDirectorySize: r.u32(), centralDirectoryOffset: r.u32(),
                    commentLength: r.u16())
    }

    /// The record's bytes, without a comment.
    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u32(Self.signature)
        w.u16(numberOfThisDisk); w.u16(diskWhereCentralDirectoryStarts); w.u16(entriesOnThisDisk); w.u16(totalEntries)
        w.u32(centralDirectorySize); w.u32(centralDirectoryOffset); w.u16(commentLength)
    }
}

/// ZIP64 end of central directory locator (APPNOTE 4.3.15), just before the end record.
public struct Zip64EndOfCentralDirectoryLocator: Sendable, Equatable {
    public static let signature: UInt32 = 0x0706_4b50
    public static let size = 20

    public var diskWithZip64EndOfCentralDirectory: UInt32
    public var zip64EndOfCentralDirectoryOffset: UInt64
    public var totalNumberOfDisks: UInt32

    public init(diskWithZip64EndOfCentralDirectory: UInt32 = 0, zip64EndOfCentralDirectoryOffset: UInt64, totalNumberOfDisks: UInt32 = 1) {
        self.diskWithZip64EndOfCentralDirectory = diskWithZip64EndOfCentralDirectory
        self.zip64EndOfCentralDirectoryOffset = zip64EndOfCentralDirectoryOffset
        self.totalNumberOfDisks = totalNumberOfDisks
    }

    /// The locator at `offset`, or nil when its signature is not there (a plain, non-ZIP64 archive).
    public static func parseIfPresent(_ bytes: [UInt8], offset: Int) -> Self? {
        var r = LittleEndianReader(bytes, offset: offset)
        guard offset >= 0, r.has(size), r.u32() == signature else { return nil }
        return Self(diskWithZip64EndOfCentralDirectory: r.u32(), zip64EndOfCentralDirectoryOffset: r.u64(),
                    totalNumberOfDisks: r.u32())
    }

    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u32(Self.signature)
        w.u32(diskWithZip64EndOfCentralDirectory); w.u64(zip64EndOfCentralDirectoryOffset); w.u32(totalNumberOfDisks)
    }
}

/// ZIP64 end of central directory record (APPNOTE 4.3.14), version 1.
public struct Zip64EndOfCentralDirectory: Sendable, Equatable {
    public static let signature: UInt32 = 0x0606_4b50
    /// Bytes before the extensible data sector.
    public static let size = 56

    /// The size of the rest of the record: everything after this field (44 + extensible data).
    public var sizeOfRecord: UInt64
    public var versionMadeBy: UInt16
    public var versionNeededToExtract: UInt16
    public var numberOfThisDisk: UInt32
    public var diskWhereCentralDirectoryStarts: UInt32
    public var entriesOnThisDisk: UInt64
    public var totalEntries: UInt64
    public var centralDirectorySize: UInt64
    public var centralDirectoryOffset: UInt64

    public init(sizeOfRecord: UInt64 = 44, versionMadeBy: UInt16 = 45, versionNeededToExtract: UInt16 = 45,
                numberOfThisDisk: UInt32 = 0, diskWhereCentralDirectoryStarts: UInt32 = 0, entriesOnThisDisk: UInt64,
                totalEntries: UInt64, centralDirectorySize: UInt64, centralDirectoryOffset: UInt64) {
        self.sizeOfRecord = sizeOfRecord
        self.versionMadeBy = versionMadeBy
        self.versionNeededToExtract = versionNeededToExtract
        self.numberOfThisDisk = numberOfThisDisk
        self.diskWhereCentralDirectoryStarts = diskWhereCentralDirectoryStarts
        self.entriesOnThisDisk = entriesOnThisDisk
        self.totalEntries = totalEntries
        self.centralDirectorySize = centralDirectorySize
        self.centralDirectoryOffset = centralDirectoryOffset
    }

    public static func parse(_ bytes: [UInt8], offset: Int = 0, archive: String, position: UInt64) throws(ArchiveError) -> Self {
        var r = LittleEndianReader(bytes, offset: offset)
        let record = "ZIP64 end of central directory record"
        try need(r, size, record, archive: archive, at: position)
        try expectSignature(&r, signature, record, archive: archive, at: position)
        return Self(sizeOfRecord: r.u64(), versionMadeBy: r.u16(), versionNeededToExtract: r.u16(),
                    numberOfThisDisk: r.u32(), diskWhereCentralDirectoryStarts: r.u32(), entriesOnThisDisk: r.u64(),
                    totalEntries: r.u64(), centralDirectorySize: r.u64(), centralDirectoryOffset: r.u64())
    }

    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u32(Self.signature)
        w.u64(sizeOfRecord); w.u16(versionMadeBy); w.u16(versionNeededToExtract)
        w.u32(numberOfThisDisk); w.u32(diskWhereCentralDirectoryStarts)
        w.u64(entriesOnThisDisk); w.u64(totalEntries); w.u64(centralDirectorySize); w.u64(centralDirectoryOffset)
    }
}

/// Central directory file header (APPNOTE 4.3.12), one per entry.
public struct ZipCentralDirectoryHeader: Sendable, Equatable {
    public static let signature: UInt32 = 0x0201_4b50
    /// Bytes before the file name.
    public static let size = 46

    public var versionMadeBy: UInt16
    public var versionNeededToExtract: UInt16
    public var generalPurposeBitFlag: UInt16
    public var compressionMethod: UInt16
    public var lastModFileTime: UInt16
    public var lastModFileDate: UInt16
    public var crc32: UInt32
    public var compressedSize: UInt32
    public var uncompressedSize: UInt32
    public var diskNumberStart: UInt16
    public var internalFileAttributes: UInt16
    public var externalFileAttributes: UInt32
    public var relativeOffsetOfLocalHeader: UInt32
    public var fileName: [UInt8]
    public var extraField: [UInt8]
    public var fileComment: [UInt8]

    /// The whole record's length, variable fields included.
    public var totalSize: Int { Self.size + fileName.count + extraField.count + fileComment.count }

    public init(versionMadeBy: UInt16, versionNeededToExtract: UInt16, generalPurposeBitFlag: UInt16,
                compressionMethod: UInt16, lastModFileTime: UInt16, lastModFileDate: UInt16, crc32: UInt32,
                compressedSize: UInt32, uncompressedSize: UInt32, diskNumberStart: UInt16 = 0,
                internalFileAttributes: UInt16 = 0, externalFileAttributes: UInt32, relativeOffsetOfLocalHeader: UInt32,
                fileName: [UInt8], extraField: [UInt8] = [], fileComment: [UInt8] = []) {
        self.versionMadeBy = versionMadeBy
        self.versionNeededToExtract = versionNeededToExtract
        self.generalPurposeBitFlag = generalPurposeBitFlag
        self.compressionMethod = compressionMethod
        self.lastModFileTime = lastModFileTime
        self.lastModFileDate = lastModFileDate
        self.crc32 = crc32
        self.compressedSize = compressedSize
        self.uncompressedSize = uncompressedSize
        self.diskNumberStart = diskNumberStart
        self.internalFileAttributes = internalFileAttributes
        self.externalFileAttributes = externalFileAttributes
        self.relativeOffsetOfLocalHeader = relativeOffsetOfLocalHeader
        self.fileName = fileName
        self.extraField = extraField
        self.fileComment = fileComment
    }

    /// Length of the fixed part plus the variable fields, read from the fixed part at `offset`
    /// (nil when fewer than `size` bytes are there).
    static func recordLength(_ bytes: [UInt8], offset: Int) -> Int? {
        var r = LittleEndianReader(bytes, offset: offset + 28)
        guard offset >= 0, bytes.count - offset >= size else { return nil }
        return size + Int(r.u16()) + Int(r.u16()) + Int(r.u16())
    }

    public static func parse(_ bytes: [UInt8], offset: Int = 0, archive: String, position: UInt64) throws(ArchiveError) -> Self {
        var r = LittleEndianReader(bytes, offset: offset)
        let record = "central directory file header"
        try need(r, size, record, archive: archive, at: position)
        try expectSignature(&r, signature, record, archive: archive, at: position)
        let madeBy = r.u16(), needed = r.u16(), flags = r.u16(), method = r.u16()
        let time = r.u16(), date = r.u16(), crc = r.u32(), compressed = r.u32(), uncompressed = r.u32()
        let nameLength = Int(r.u16()), extraLength = Int(r.u16()), commentLength = Int(r.u16())
        let disk = r.u16(), internalAttributes = r.u16(), external = r.u32(), localOffset = r.u32()
        try need(r, nameLength + extraLength + commentLength, record, archive: archive, at: position)
        return Self(versionMadeBy: madeBy, versionNeededToExtract: needed, generalPurposeBitFlag: flags,
                    compressionMethod: method, lastModFileTime: time, lastModFileDate: date, crc32: crc,
                    compressedSize: compressed, uncompressedSize: uncompressed, diskNumberStart: disk,
                    internalFileAttributes: internalAttributes, externalFileAttributes: external,
                    relativeOffsetOfLocalHeader: localOffset, fileName: r.take(nameLength),
                    extraField: r.take(extraLength), fileComment: r.take(commentLength))
    }

    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u32(Self.signature)
        w.u16(versionMadeBy); w.u16(versionNeededToExtract); w.u16(generalPurposeBitFlag); w.u16(compressionMethod)
        w.u16(lastModFileTime); w.u16(lastModFileDate); w.u32(crc32); w.u32(compressedSize); w.u32(uncompressedSize)
        w.u16(UInt16(truncatingIfNeeded: fileName.count)); w.u16(UInt16(truncatingIfNeeded: extraField.count))
        w.u16(UInt16(truncatingIfNeeded: fileComment.count))
        w.u16(diskNumberStart); w.u16(internalFileAttributes); w.u32(externalFileAttributes); w.u32(relativeOffsetOfLocalHeader)
        w.append(fileName); w.append(extraField); w.append(fileComment)
    }
}

/// Local file header (APPNOTE 4.3.7), just before each entry's data.
public struct ZipLocalFileHeader: Sendable, Equatable {
    public static let signature: UInt32 = 0x0403_4b50
    /// Bytes before the file name.
    public static let size = 30

    public var versionNeededToExtract: UInt16
    public var generalPurposeBitFlag: UInt16
    public var compressionMethod: UInt16
    public var lastModFileTime: UInt16
    public var lastModFileDate: UInt16
    public var crc32: UInt32
    public var compressedSize: UInt32
    public var uncompressedSize: UInt32
    public var fileNameLength: UInt16
    public var extraFieldLength: UInt16

    /// The fixed part plus the name and extra field.
    public var totalSize: Int { Self.size + Int(fileNameLength) + Int(extraFieldLength) }

    public init(versionNeededToExtract: UInt16, generalPurposeBitFlag: UInt16, compressionMethod: UInt16,
                lastModFileTime: UInt16, lastModFileDate: UInt16, crc32: UInt32, compressedSize: UInt32,
                uncompressedSize: UInt32, fileNameLength: UInt16, extraFieldLength: UInt16) {
        self.versionNeededToExtract = versionNeededToExtract
        self.generalPurposeBitFlag = generalPurposeBitFlag
        self.compressionMethod = compressionMethod
        self.lastModFileTime = lastModFileTime
        self.lastModFileDate = lastModFileDate
        self.crc32 = crc32
        self.compressedSize = compressedSize
        self.uncompressedSize = uncompressedSize
        self.fileNameLength = fileNameLength
        self.extraFieldLength = extraFieldLength
    }

    /// Decodes the fixed part; the name and extra field follow it.
    public static func parse(_ bytes: [UInt8], offset: Int = 0, archive: String, entry: String?, position: UInt64) throws(ArchiveError) -> Self {
        var r = LittleEndianReader(bytes, offset: offset)
        let record = "local file header"
        try need(r, size, record, archive: archive, entry: entry, at: position)
        try expectSignature(&r, signature, record, archive: archive, entry: entry, at: position)
        return Self(versionNeededToExtract: r.u16(), generalPurposeBitFlag: r.u16(), compressionMethod: r.u16(),
                    lastModFileTime: r.u16(), lastModFileDate: r.u16(), crc32: r.u32(), compressedSize: r.u32(),
                    uncompressedSize: r.u32(), fileNameLength: r.u16(), extraFieldLength: r.u16())
    }

    /// The fixed part; the caller appends the name and extra field.
    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u32(Self.signature)
        w.u16(versionNeededToExtract); w.u16(generalPurposeBitFlag); w.u16(compressionMethod)
        w.u16(lastModFileTime); w.u16(lastModFileDate); w.u32(crc32); w.u32(compressedSize); w.u32(uncompressedSize)
        w.u16(fileNameLength); w.u16(extraFieldLength)
    }
}

/// Data descriptor (APPNOTE 4.3.9), after an entry's data when bit 3 of the flags is set. The
/// signature is optional (4.3.9.3); the sizes are 8 bytes each for ZIP64 entries (4.3.9.2).
public struct ZipDataDescriptor: Sendable, Equatable {
    public static let signature: UInt32 = 0x0807_4b50

    public var crc32: UInt32
    public var compressedSize: UInt64
    public var uncompressedSize: UInt64
    public var hasSignature: Bool
    public var zip64: Bool

    public init(crc32: UInt32, compressedSize: UInt64, uncompressedSize: UInt64, hasSignature: Bool = true, zip64: Bool = false) {
        self.crc32 = crc32
        self.compressedSize = compressedSize
        self.uncompressedSize = uncompressedSize
        self.hasSignature = hasSignature
        self.zip64 = zip64
    }

    public var size: Int { (hasSignature ? 4 : 0) + 4 + (zip64 ? 16 : 8) }

    /// The longest a descriptor can be.
    public static let maximumSize = 24

    /// Every reading of the bytes at `offset` as a descriptor (with or without signature, 32- or
    /// 64-bit sizes) that fits; the reader keeps the one that agrees with the central directory,
    /// since the bytes alone cannot say which form a writer used.
    public static func candidates(_ bytes: [UInt8], offset: Int = 0) -> [Self] {
        var result: [Self] = []
        for hasSignature in [true, false] {
            for zip64 in [false, true] {
                var r = LittleEndianReader(bytes, offset: offset)
                let length = (hasSignature ? 4 : 0) + 4 + (zip64 ? 16 : 8)
                guard offset >= 0, r.has(length) else { continue }
                if hasSignature && r.u32() != signature { continue }
                let crc = r.u32()
                let compressed = zip64 ? r.u64() : UInt64(r.u32())
                let uncompressed = zip64 ? r.u64() : UInt64(r.u32())
                result.append(Self(crc32: crc, compressedSize: compressed, uncompressedSize: uncompressed,
                                   hasSignature: hasSignature, zip64: zip64))
            }
        }
        return result
    }

    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        if hasSignature { w.u32(Self.signature) }
        w.u32(crc32)
        if zip64 { w.u64(compressedSize); w.u64(uncompressedSize) } else {
            w.u32(UInt32(truncatingIfNeeded: compressedSize)); w.u32(UInt32(truncatingIfNeeded: uncompressedSize))
        }
    }
}

/// One extra field block (APPNOTE 4.5.1): a header ID, then `data`.
public struct ZipExtraField: Sendable, Equatable {
    public var headerID: UInt16
    public var data: [UInt8]

    public init(headerID: UInt16, data: [UInt8]) {
        self.headerID = headerID
        self.data = data
    }

    /// Splits an extra field area into its blocks; nil when a block runs past the end.
    public static func parseAll(_ bytes: [UInt8]) -> [Self]? {
        var r = LittleEndianReader(bytes)
        var result: [Self] = []
        while r.remaining > 0 {
            // Some writers pad the area with fewer than 4 zero bytes; Info-ZIP and Python ignore them.
            guard r.has(4) else { return bytes[r.offset...].allSatisfy { $0 == 0 } ? result : nil }
            let id = r.u16(), length = Int(r.u16())
            guard r.has(length) else { return nil }
            result.append(Self(headerID: id, data: r.take(length)))
        }
        return result
    }

    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the record's bytes to `w`.
    func append(to w: inout LittleEndianWriter) {
        w.u16(headerID); w.u16(UInt16(truncatingIfNeeded: data.count)); w.append(data)
    }
}

/// The ZIP64 extended information extra field (APPNOTE 4.5.3, header ID 0x0001). It holds
/// only the values whose header fields are saturated (0xFFFFFFFF, or 0xFFFF for the disk), in
/// this fixed order.
public struct Zip64ExtendedInformation: Sendable, Equatable {
    public static let headerID: UInt16 = 0x0001

    public var uncompressedSize: UInt64?
    public var compressedSize: UInt64?
    public var relativeOffsetOfLocalHeader: UInt64?
    public var diskStartNumber: UInt32?

    public init(uncompressedSize: UInt64? = nil, compressedSize: UInt64? = nil,
                relativeOffsetOfLocalHeader: UInt64? = nil, diskStartNumber: UInt32? = nil) {
        self.uncompressedSize = uncompressedSize
        self.compressedSize = compressedSize
        self.relativeOffsetOfLocalHeader = relativeOffsetOfLocalHeader
        self.diskStartNumber = diskStartNumber
    }

    /// Reads the values the header says are here; nil when the field is too short for them.
    public static func parse(_ data: [UInt8], needsUncompressed: Bool, needsCompressed: Bool,
                             needsOffset: Bool, needsDisk: Bool) -> Self? {
        var r = LittleEndianReader(data)
        var result = Self()
        if needsUncompressed { guard r.has(8) else { return nil }; result.uncompressedSize = r.u64() }
        if needsCompressed { guard r.has(8) else { return nil }; result.compressedSize = r.u64() }
        if needsOffset { guard r.has(8) else { return nil }; result.relativeOffsetOfLocalHeader = r.u64() }
        if needsDisk { guard r.has(4) else { return nil }; result.diskStartNumber = r.u32() }
        return result
    }

    /// Whether no value is here (a writer then leaves the field out).
    public var isEmpty: Bool {
        uncompressedSize == nil && compressedSize == nil && relativeOffsetOfLocalHeader == nil && diskStartNumber == nil
    }

    /// The whole extra field block, header ID and length included.
    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the whole extra field block to `w`.
    func append(to w: inout LittleEndianWriter) {
        var values = LittleEndianWriter(capacity: 28)
        if let uncompressedSize { values.u64(uncompressedSize) }
        if let compressedSize { values.u64(compressedSize) }
        if let relativeOffsetOfLocalHeader { values.u64(relativeOffsetOfLocalHeader) }
        if let diskStartNumber { values.u32(diskStartNumber) }
        ZipExtraField(headerID: Self.headerID, data: values.bytes).append(to: &w)
    }
}

/// Info-ZIP's extended timestamp extra field ("UT", header ID 0x5455, proginfo/extrafld.txt):
/// a flags byte whose bits say which times follow (bit 0 the modification time, 1 the access
/// time, 2 the creation time, locally; the central form carries the modification time at most),
/// each a signed 32-bit count of seconds since 1970, UTC. Unlike the MS-DOS time it names one
/// instant in every time zone, to the second. Only the modification time is read or written
/// here, so the local and the central forms are the same five bytes.
public struct ZipExtendedTimestamp: Sendable, Equatable {
    /// "UT": the bytes 0x55 0x54 on disk.
    public static let headerID: UInt16 = 0x5455
    /// Flags bit 0: a modification time follows.
    static let modificationTimeFlag: UInt8 = 0x01

    /// Seconds since 1970, UTC.
    public var modificationTime: Int32

    /// A field stating `modificationTime` (seconds since 1970, UTC).
    public init(modificationTime: Int32) {
        self.modificationTime = modificationTime
    }

    /// The modification time; nil when the flags say there is none (a field with only an
    /// access or creation time) or the field is too short to hold it.
    public static func parse(_ data: [UInt8]) -> Self? {
        var r = LittleEndianReader(data)
        guard r.has(5), r.u8() & modificationTimeFlag != 0 else { return nil }
        return Self(modificationTime: Int32(bitPattern: r.u32()))
    }

    /// The whole extra field block, header ID and length included.
    public func serialize() -> [UInt8] { LittleEndianWriter.bytes(append(to:)) }

    /// Appends the whole extra field block to `w`.
    func append(to w: inout LittleEndianWriter) {
        var values = LittleEndianWriter(capacity: 5)
        values.append([Self.modificationTimeFlag])
        values.u32(UInt32(bitPattern: modificationTime))
        ZipExtraField(headerID: Self.headerID, data: values.bytes).append(to: &w)
    }
}
