@testable import SyncrCore
import SyncrHTTP
import SyncrManifest
import Testing

/// The rules of `--locked`, from values: what counts as a changed server, and when the record
/// vouches for the destination without a request.
@Suite(.timeLimit(.minutes(10))) struct LockCheckTests {
    static let entry = LockedEntry(to: "a.bin", url: "https://example.com/file.bin", size: Fixture.size,
                                   etag: Fixture.strongV1.headerValue, sha256: Fixture.sha)

    @Test func sameSizeAndETagIsNoChange() {
        #expect(LockCheck.drift(Self.entry, Fixture.remote()) == nil)
        // Last-Modified alone is not held against the server.
        #expect(LockCheck.drift(Self.entry, Fixture.remote(lastModified: Fixture.laterModified)) == nil)
    }

    @Test func sizeOrETagChangeIsNamed() {
        #expect(LockCheck.drift(Self.entry, Fixture.remote(size: 1001)) == "size 1000 → 1001 bytes")
        #expect(LockCheck.drift(Self.entry, Fixture.remote(etag: Fixture.strongV2)) == "ETag \"v1\" → \"v2\"")
        #expect(LockCheck.drift(Self.entry, Fixture.remote(etag: Fixture.weakV1)) == "ETag \"v1\" → W/\"v1\"")
        #expect(LockCheck.drift(Self.entry, Fixture.remote(etag: nil))?.contains("no longer sends an ETag") == true)
    }

    /// Where the URL leads: named in front of a change of the file; on its own held against
    /// the server only when the lock has neither SHA-256 nor ETag to know the file by (a mirror
    /// may serve one file from several places).
    @Test func aURLThatLeadsElsewhere() {
        var entry = Self.entry
        entry.finalURL = "https://cdn.example.com/v1.bin"
        let other = "https://cdn.example.com/v2.bin"
        #expect(LockCheck.drift(entry, Fixture.remote(), finalURL: entry.finalURL) == nil)
        #expect(LockCheck.drift(entry, Fixture.remote(), finalURL: other) == nil, "known by SHA-256 and ETag")
        #expect(LockCheck.drift(entry, Fixture.remote(size: 1001), finalURL: other)
                == "the URL now leads to \(other), locked \(entry.finalURL!); size 1000 → 1001 bytes")
        var weak = entry
        weak.etag = nil
        weak.sha256 = nil
        let moved = LockCheck.drift(weak, Fixture.remote(etag: nil), finalURL: other)
        #expect(moved?.hasPrefix("the URL now leads to \(other), locked \(entry.finalURL!) (the lock has neither") == true
                && moved?.hasSuffix("pin the file by content with 'syncr lock --hash')") == true, "\(moved ?? "")")
        #expect(LockCheck.drift(weak, Fixture.remote(etag: nil), finalURL: entry.finalURL) == nil)
    }

    /// With neither SHA-256 nor ETag locked, Last-Modified is all that tells two files of one
    /// size apart: a new date is a change (a locked run placed another file of the same size).
    @Test func aNewDateIsAChangeWhereNothingElsePinsTheFile() {
        var weak = Self.entry
        weak.etag = nil
        weak.sha256 = nil
        weak.lastModified = Fixture.lastModified
        #expect(LockCheck.drift(weak, Fixture.remote(etag: nil, lastModified: Fixture.lastModified)) == nil)
        let changed = LockCheck.drift(weak, Fixture.remote(etag: nil, lastModified: Fixture.laterModified))
        #expect(changed?.hasPrefix("Last-Modified ") == true && changed?.contains("syncr lock --hash") == true, "\(changed ?? "")")
        var hashed = weak
        hashed.sha256 = Fixture.sha
        #expect(LockCheck.drift(hashed, Fixture.remote(etag: nil, lastModified: Fixture.laterModified)) == nil, "known by SHA-256")
    }

    @Test func recordVouchesOnlyForTheVerifiedUnchangedDestination() {
        var state = Fixture.complete(verified: ["sha256": Fixture.sha])
        state.destinationFingerprint = Fixture.written
        #expect(LockCheck.vouches(state, for: Self.entry, destination: Fixture.written, tree: nil, unzip: false))
        #expect(!LockCheck.vouches(state, for: Self.entry, destination: Fixture.edited, tree: nil, unzip: false), "edited since")
        #expect(!LockCheck.vouches(state, for: Self.entry, destination: nil, tree: nil, unzip: false), "gone")
        var other = Self.entry
        other.sha256 = Fixture.otherSHA
        #expect(!LockCheck.vouches(state, for: other, destination: Fixture.written, tree: nil, unzip: false), "another SHA-256")
        other.sha256 = nil
        #expect(!LockCheck.vouches(state, for: other, destination: Fixture.written, tree: nil, unzip: false), "no SHA-256 locked")
        state.verified = [:]
        #expect(!LockCheck.vouches(state, for: Self.entry, destination: Fixture.written, tree: nil, unzip: false), "never verified")
    }
}
