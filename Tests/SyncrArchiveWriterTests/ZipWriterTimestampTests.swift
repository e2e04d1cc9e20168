import Foundation
import Testing
@testable import SyncrArchive

/// The extended timestamp extra field (Info-ZIP "UT", 0x5455): each entry's modification time
/// as UTC seconds beside its local MS-DOS time, so that an archive unpacks with the right times
/// in any time zone, to the second.
@Suite(.timeLimit(.minutes(5))) struct ZipWriterTimestampTests {
    /// Set in the helper process of the Info-ZIP test: the folder to zip and the archive,
    /// separated by a tab.
    static let helperVariable = "SYNCR_ZIP_TIMESTAMP_HELPER"

    @Test func bothHeadersStateEachEntrysTimeToTheSecond() throws {
        let scratch = try Scratch("ut")
        let (root, times) = try makeTimedTree(scratch)
        let archive = scratch.path + "/out.zip", single = scratch.path + "/single.zip"
        _ = try ZipWriter.write(directory: root, to: archive, options: .init(threads: 3))
        _ = try ZipWriter.write(directory: root, to: single, options: .init(threads: 1))
        #expect(try Data(contentsOf: URL(fileURLWithPath: archive)) == Data(contentsOf: URL(fileURLWithPath: single)),
                "the same bytes whatever the thread count")

        let extras = try headerExtras(archive)
        #expect(Set(extras.keys) == Set(times.keys))
        for (name, time) in times {
            // A time before 1970 gets none: readers disagree about a negative count.
            let expected = time >= 0 ? [Int32(time)] : []
            #expect(extendedTimes(extras[name]?.local) == expected, "local header of \(name)")
            #expect(extendedTimes(extras[name]?.central) == expected, "central header of \(name)")
        }
        for entry in try ZipReader(path: archive).entries where times[entry.name].map({ $0 >= 0 }) == true {
            #expect(entry.modificationTime == times[entry.name], "\(entry.name)")
        }
    }

    @Test func deterministicArchivesCarryNoExtendedTimestamp() throws {
        let scratch = try Scratch("ut-det")
        let (root, times) = try makeTimedTree(scratch)
        let archive = scratch.path + "/out.zip"
        _ = try ZipWriter.write(directory: root, to: archive, options: .init(deterministic: true))
        let extras = try headerExtras(archive)
        #expect(extras.count == times.count)
        for (name, fields) in extras {
            #expect(fields.local.isEmpty && fields.central.isEmpty, "no extra field at all in \(name)")
        }
        let epoch = ZipReader.dosTime(date: ZipWriter.DOSDateTime.epoch.date, time: ZipWriter.DOSDateTime.epoch.time)
        #expect(try ZipReader(path: archive).entries.allSatisfy { $0.modificationTime == epoch })
    }

    /// The bytes of a deterministic archive of a fixed tree, as syncr wrote them before it wrote
    /// extended timestamps: a deterministic archive changes only when the tree does. (A writer
    /// change meant to alter these bytes updates the digest, and says so.)
    @Test func deterministicBytesAreUnchanged() throws {
        let scratch = try Scratch("ut-golden")
        let root = try makeGoldenTree(scratch)
        let archive = scratch.path + "/out.zip"
        _ = try ZipWriter.write(directory: root, to: archive, options: .init(deterministic: true))
        let digest = try python("import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
                                [archive]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(digest == "f73055af63de3ca8b5437dc7ed9605f54850059f2a2cf149a8f481674efd3c92")
    }

    @Test(arguments: [false, true])
    func sourceDateEpochIsStatedInBothHeaders(deterministic: Bool) throws {
        let scratch = try Scratch("ut-sde")
        let (root, times) = try makeTimedTree(scratch)
        let archive = scratch.path + "/out.zip"
        // An odd second, which the MS-DOS time cannot hold.
        let epoch: Int64 = 1_700_000_001
        _ = try ZipWriter.write(directory: root, to: archive,
                                options: .init(deterministic: deterministic, sourceDateEpoch: epoch))
        let extras = try headerExtras(archive)
        #expect(extras.count == times.count)
        for (name, fields) in extras {
            #expect(extendedTimes(fields.local) == [Int32(epoch)], "local header of \(name)")
            #expect(extendedTimes(fields.central) == [Int32(epoch)], "central header of \(name)")
        }
        #expect(try ZipReader(path: archive).entries.allSatisfy { $0.modificationTime == epoch })
    }

    @Test func aTimeTheFieldCannotHoldIsLeftOut() throws {
        let scratch = try Scratch("ut-2038")
        try scratch.write("tree/last.txt", Data("last".utf8))
        try scratch.write("tree/after.txt", Data("after".utf8))
        try setTime(scratch.path + "/tree/last.txt", Int64(Int32.max))
        try setTime(scratch.path + "/tree/after.txt", Int64(Int32.max) + 1)
        let archive = scratch.path + "/out.zip"
        _ = try ZipWriter.write(directory: scratch.path + "/tree", to: archive)
        let extras = try headerExtras(archive)
        #expect(extendedTimes(extras["last.txt"]?.local) == [Int32.max])
        #expect(extendedTimes(extras["last.txt"]?.central) == [Int32.max])
        #expect(extras["after.txt"]?.local.isEmpty == true && extras["after.txt"]?.central.isEmpty == true)
    }

    /// From 1970 to 2038: the field is signed, but Info-ZIP's unzip (with a 64-bit `time_t`)
    /// ignores a negative count, and Go's reader takes it as unsigned (a time in 2106).
    @Test(arguments: [(Int64(Int32.max), Int32.max), (Int64(Int32.max) + 1, nil), (0, 0),
                      (Int64(Int32.min), nil), (Int64(Int32.min) - 1, nil), (-86_401, nil)])
    func extendedTimeHoldsSeconds1970To2038(seconds: Int64, expected: Int32?) {
        #expect(ZipWriter.extendedTime(seconds, options: .init()) == expected)
        #expect(ZipWriter.extendedTime(0, options: .init(sourceDateEpoch: seconds)) == expected)
        #expect(ZipWriter.extendedTime(seconds, options: .init(deterministic: true)) == nil)
    }

    /// A file over 4 GiB has a ZIP64 field in both headers; the timestamp follows it, and every
    /// length covers both.
    @Test func zip64AndTimestampFieldsShareTheExtraField() throws {
        let record = ZipWriter.ZipEntryRecord(name: Array("x".utf8), method: .deflated, modified: .epoch, crc32: 1,
                                              compressedSize: 10, uncompressedSize: 0x1_0000_0000,
                                              localHeaderOffset: 0x1_2345_6789, mode: 0o100644, isDirectory: false,
                                              localZip64: true, utcModified: 1_700_000_001)
        let local = record.localFileHeader()
        #expect(local.count == 30 + 1 + 20 + 9)
        #expect(Array(local[28..<30]) == [29, 0], "the extra field length covers both fields")
        let localFields = try #require(ZipExtraField.parseAll(Array(local[31...])))
        #expect(localFields.map(\.headerID) == [0x0001, 0x5455])
        #expect(extendedTimes(localFields) == [1_700_000_001])

        let central = record.centralDirectoryHeader()
        let centralFields = try #require(ZipExtraField.parseAll(central.extraField))
        #expect(centralFields.map(\.headerID) == [0x0001, 0x5455])
        #expect(centralFields[0].data.count == 16, "uncompressed size and offset")
        #expect(extendedTimes(centralFields) == [1_700_000_001])
        let bytes = central.serialize()
        #expect(bytes.count == central.totalSize && bytes.count == 46 + 1 + 20 + 9)
        #expect(Array(bytes[30..<32]) == [29, 0])
    }

    /// Zipped where the time zone is UTC, unpacked by Info-ZIP's unzip in Tokyo (UTC+9): every
    /// file and folder gets back its own time, odd seconds and a time before 1980 included.
    /// With the MS-DOS time alone, each would be 9 hours off, and odd seconds one second early.
    /// (Links are left out: unzip does not set a link's own time. So is the time before 1970,
    /// which gets no field: unzip takes the MS-DOS time, 1980, for it.)
    @Test func infoZipRestoresTheTimesInAnotherTimeZone() throws {
        try #require(FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Asia/Tokyo"),
                     "the time zone data (tzdata, which scripts/setup installs) is missing")
        let scratch = try Scratch("ut-tokyo")
        let (root, times) = try makeTimedTree(scratch)
        let archive = scratch.path + "/out.zip", unpacked = scratch.path + "/unpacked"
        // The writer takes the time zone of its process: the zip is made in a process of its own.
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let zipped = try run(me, ["--testing-library", "swift-testing", "--filter", "zipsForTheTimeZoneTest"],
                             environment: ["TZ": "UTC", Self.helperVariable: root + "\t" + archive])
        try #require(FileManager.default.fileExists(atPath: archive), "the helper process did not zip: \(zipped.stdout)\(zipped.stderr)")

        let unzip = try run("/usr/bin/unzip", ["-q", archive, "-d", unpacked], environment: ["TZ": "Asia/Tokyo"])
        #expect(unzip.status == 0, "\(unzip.stdout)\(unzip.stderr)")
        for (name, time) in times where name != "link" && time >= 0 {
            #expect(modificationTime(unpacked + "/" + name) == time, "\(name)")
        }
    }

    /// Not a test of its own: the helper process of the test above zips the folder it is given.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[helperVariable] != nil))
    func zipsForTheTimeZoneTest() throws {
        let paths = try #require(ProcessInfo.processInfo.environment[Self.helperVariable]).split(separator: "\t")
        _ = try ZipWriter.write(directory: String(paths[0]), to: String(paths[1]))
    }
}

/// A folder, files and a link, each with its own time: odd seconds (which the MS-DOS time cannot
/// hold), one before 1980 (before what it can hold) and one before 1970 (which gets no field).
/// Returns the folder and each entry's time.
private func makeTimedTree(_ scratch: Scratch) throws -> (root: String, times: [String: Int64]) {
    let root = scratch.path + "/tree"
    try scratch.write("tree/odd.txt", Data(String(repeating: "odd ", count: 500).utf8))
    try scratch.write("tree/old.txt", Data("before 1970\n".utf8))
    try scratch.write("tree/early.txt", Data("before 1980\n".utf8))
    try scratch.write("tree/sub/even.bin", randomData(bytes: 3000))
    try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "odd.txt")
    let times: [String: Int64] = ["odd.txt": 1_700_000_001, "old.txt": -86_401, "early.txt": 100_000_001,
                                  "sub/even.bin": 1_000_000_000,
                                  "link": 1_500_000_005, "sub/": 1_600_000_003]
    // Files first: adding to a folder changes its time.
    for (name, time) in times.sorted(by: { $0.key.count > $1.key.count }) { try setTime(root + "/" + name, time) }
    return (root, times)
}

/// A fixed tree whose deterministic archive has a known digest: modes set explicitly, so the
/// umask does not matter.
private func makeGoldenTree(_ scratch: Scratch) throws -> String {
    let root = scratch.path + "/tree"
    try scratch.write("tree/a.txt", Data(String(repeating: "hello, zip\n", count: 200).utf8))
    try scratch.write("tree/bin/run.sh", Data("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
    try scratch.write("tree/random.bin", randomData(bytes: 4096))
    try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
    for folder in ["bin", "empty"] {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/" + folder)
    }
    try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "a.txt")
    return root
}

/// Sets the modification (and access) time of `path` itself, not of what a link points to.
private func setTime(_ path: String, _ seconds: Int64) throws {
    var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
    guard utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}

/// The modification time of `path` itself, or nil when it cannot be read.
private func modificationTime(_ path: String) -> Int64? {
    var st = stat()
    return lstat(path, &st) == 0 ? Int64(st.st_mtim.tv_sec) : nil
}

/// Each entry's extra fields, from its local and its central header, read from the archive's
/// bytes (the reader keeps neither). For archives without ZIP64 end records or a comment.
private func headerExtras(_ archive: String) throws -> [String: (local: [ZipExtraField], central: [ZipExtraField])] {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
    let end = try ZipEndOfCentralDirectory.parse(bytes, offset: bytes.count - ZipEndOfCentralDirectory.size,
                                                 archive: archive, position: 0)
    var result: [String: (local: [ZipExtraField], central: [ZipExtraField])] = [:]
    var offset = Int(end.centralDirectoryOffset)
    for _ in 0..<Int(end.totalEntries) {
        let central = try ZipCentralDirectoryHeader.parse(bytes, offset: offset, archive: archive, position: UInt64(offset))
        offset += central.totalSize
        let at = Int(central.relativeOffsetOfLocalHeader)
        let local = try ZipLocalFileHeader.parse(bytes, offset: at, archive: archive, entry: nil, position: UInt64(at))
        let start = at + ZipLocalFileHeader.size + Int(local.fileNameLength)
        let localExtra = Array(bytes[start..<(start + Int(local.extraFieldLength))])
        result[String(decoding: central.fileName, as: UTF8.self)] =
            (try #require(ZipExtraField.parseAll(localExtra)), try #require(ZipExtraField.parseAll(central.extraField)))
    }
    return result
}

/// The times of the extended timestamp fields among `fields`, decoded here rather than by the
/// reader; nil for one that is not exactly flags 0x01 and a 4-byte time.
private func extendedTimes(_ fields: [ZipExtraField]?) -> [Int32?] {
    (fields ?? []).filter { $0.headerID == 0x5455 }.map { field in
        let d = field.data
        guard d.count == 5, d[0] == 0x01 else { return nil }
        return Int32(bitPattern: UInt32(d[1]) | UInt32(d[2]) << 8 | UInt32(d[3]) << 16 | UInt32(d[4]) << 24)
    }
}
