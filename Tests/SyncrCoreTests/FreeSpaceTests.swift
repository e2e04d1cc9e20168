#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import SyncrCore

/// The pure part of the free-space check: needs per file system against what is free.
@Suite(.timeLimit(.minutes(10))) struct FreeSpaceTests {
    let cache = FreeSpace.Volume(device: 1, folder: "/cache", available: 300 << 20)
    let data = FreeSpace.Volume(device: 2, folder: "/data", available: 10 << 30)

    @Test func downloadsThatDoNotFitInTheCacheAreWarnedAbout() {
        let needs = FreeSpace.needs(size: 1 << 30, cached: 0, cache: cache, destination: cache, unpacked: false)
            + FreeSpace.needs(size: 200 << 20, cached: 0, cache: cache, destination: cache, unpacked: false)
        #expect(FreeSpace.warnings(for: needs).map(\.description) == [
            "downloads need 1.2 GiB in /cache but 300.0 MiB is free; free some space first, or apply will stop the entries that do not fit",
        ])
    }

    @Test func downloadsThatFitGiveNoWarning() {
        let needs = FreeSpace.needs(size: 100 << 20, cached: 0, cache: cache, destination: cache, unpacked: false)
            + FreeSpace.needs(size: 200 << 20, cached: 0, cache: cache, destination: cache, unpacked: false)
        #expect(FreeSpace.warnings(for: needs).isEmpty)
    }

    @Test func cachedBytesAreNotCountedAgain() {
        let resumed = FreeSpace.needs(size: 400 << 20, cached: 150 << 20, cache: cache, destination: cache, unpacked: false)
        #expect(resumed == [FreeSpace.Need(volume: cache, bytes: 250 << 20)])
        #expect(FreeSpace.warnings(for: resumed).isEmpty)
    }

    @Test func aDestinationOnAnotherFileSystemNeedsACopy() {
        let small = FreeSpace.Volume(device: 3, folder: "/small", available: 1 << 20)
        let needs = FreeSpace.needs(size: 2 << 20, cached: 2 << 20, cache: cache, destination: small, unpacked: false)
        #expect(needs == [FreeSpace.Need(volume: cache, bytes: 0), FreeSpace.Need(volume: small, bytes: 2 << 20)])
        #expect(FreeSpace.warnings(for: needs).map(\.description) == [
            "downloads need 2.0 MiB in /small but 1.0 MiB is free; free some space first, or apply will stop the entries that do not fit",
        ])
    }

    @Test func anUnpackedArchiveCountsOnTheDestinationToo() {
        let needs = FreeSpace.needs(size: 5 << 20, cached: 0, cache: data, destination: data, unpacked: true)
        #expect(needs.map(\.bytes) == [5 << 20, 5 << 20])
    }

    @Test func unknownSizesNeedNothing() {
        #expect(FreeSpace.needs(size: nil, cached: 0, cache: cache, destination: data, unpacked: false).isEmpty)
    }

    /// Servers give the sizes: many near the largest a header can carry must sum to a warning,
    /// not trap (a manifest of 20 entries from such a server stopped `plan` with a crash).
    @Test func needsNearTheLargestSizeSumWithoutOverflow() {
        let huge: Int64 = 999_999_999_999_999_999
        let needs = (0..<20).map { _ in FreeSpace.Need(volume: cache, bytes: huge) }
        #expect(FreeSpace.warnings(for: needs).first?.description.hasPrefix("downloads need 8.0 EiB in /cache") == true,
                "\(FreeSpace.warnings(for: needs))")
        let item = PlanItem(index: 0, url: "http://h/f", to: "f", action: .download, size: huge, offset: 0, bytes: huge, reason: "")
        #expect(Plan(items: Array(repeating: item, count: 20)).downloadBytes == .max)
    }

    @Test func eachFileSystemIsWarnedAboutOnceInFirstSeenOrder() {
        let tiny = FreeSpace.Volume(device: 4, folder: "/tiny", available: 0)
        let needs = [FreeSpace.Need(volume: tiny, bytes: 1), FreeSpace.Need(volume: cache, bytes: 400 << 20),
                     FreeSpace.Need(volume: tiny, bytes: 2)]
        let warnings = FreeSpace.warnings(for: needs)
        #expect(warnings.count == 2)
        #expect(warnings.first?.description.hasPrefix("downloads need 3 B in /tiny but 0 B is free") == true)
        #expect(warnings.first == .notEnoughSpace(folder: "/tiny", needed: 3, available: 0))
        #expect(warnings.map(\.code) == ["not_enough_space", "not_enough_space"])
    }

    @Test func theVolumeOfAFolderNotYetCreatedIsItsNearestParent() throws {
        let before = try Self.bytesAvailable("/tmp")
        let volume = try #require(FreeSpace.volume(for: "/tmp/syncr-does-not-exist/a/b"))
        let after = try Self.bytesAvailable("/tmp")
        #expect(volume.folder == "/tmp")
        var st = stat()
        try #require(stat("/tmp", &st) == 0)
        #expect(volume.device == UInt64(st.st_dev), "the file system of /tmp")
        // What statvfs says of /tmp, give or take what other programs wrote in the meantime.
        let slack: Int64 = 64 << 20
        #expect(volume.available >= min(before, after) - slack && volume.available <= max(before, after) + slack,
                "\(volume.available) bytes free; statvfs said \(before), then \(after)")
    }

    /// Bytes available to an unprivileged user on the file system holding `path`.
    static func bytesAvailable(_ path: String) throws -> Int64 {
        var vfs = statvfs()
        try #require(statvfs(path, &vfs) == 0)
        return Int64(vfs.f_bavail) * Int64(vfs.f_frsize)
    }
}
