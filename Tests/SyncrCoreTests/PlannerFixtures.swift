@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// Small builders for planner inputs, so each table row reads as the situation it describes.
enum Fixture {
    static let size: Int64 = 1000
    static let strongV1 = EntityTag(opaque: "v1", isWeak: false)
    static let strongV2 = EntityTag(opaque: "v2", isWeak: false)
    static let weakV1 = EntityTag(opaque: "v1", isWeak: true)
    static let lastModified = "Tue, 01 Oct 2024 10:00:00 GMT"
    static let laterModified = "Wed, 02 Oct 2024 10:00:00 GMT"

    /// How the destination looked right after syncr moved it into place.
    static let written = FileFingerprint(device: 1, inode: 42, size: 1000,
                                         mtimeNanoseconds: 1_700_000_000_000_000_000)
    /// The same file after someone edited it (new mtime, same inode and size).
    static let edited = FileFingerprint(device: 1, inode: 42, size: 1000,
                                        mtimeNanoseconds: 1_700_000_100_000_000_000)

    static let sha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    static let otherSHA = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7"
    static let pinned: [Checksum] = [.sha256(sha)]

    static func remote(size: Int64? = Fixture.size, etag: EntityTag? = strongV1, lastModified: String? = nil,
                       acceptsRanges: Bool = true) -> RemoteResource {
        RemoteResource(size: size, etag: etag, lastModified: lastModified, acceptsRanges: acceptsRanges,
                       finalURL: "https://example.com/file.bin", method: "HEAD")
    }

    /// A finished download, moved to the destination as `written`.
    static func complete(size: Int64 = Fixture.size, etag: EntityTag? = strongV1, lastModified: String? = nil,
                         verified: [String: String] = [:]) -> EntryState {
        var state = EntryState(url: "https://example.com/file.bin")
        state.size = size
        state.etag = etag
        state.lastModified = lastModified
        state.good = size
        state.complete = true
        state.verified = verified
        state.destination = "/work/proj/file.bin"
        state.destinationFingerprint = written
        return state
    }

    /// A download cut off after `good` bytes.
    static func partial(good: Int64 = 400, size: Int64? = Fixture.size, etag: EntityTag? = strongV1,
                        lastModified: String? = nil) -> EntryState {
        var state = EntryState(url: "https://example.com/file.bin")
        state.size = size
        state.etag = etag
        state.lastModified = lastModified
        state.good = good
        return state
    }
}
