import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// One row of the decision table: a situation and what the planner must say about it.
struct DecisionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var checksums: [Checksum] = []
    var remote: RemoteResource = Fixture.remote()
    var local: LocalFacts
    var action: Action
    var offset: Int64 = 0
    var bytes: Int64?
    /// Facts the one-line reason must name (case-sensitive substrings).
    var mentions: [String]

    var testDescription: String { name }
}

typealias F = Fixture

let decisionTable: [DecisionCase] = [
    // Nothing on disk.
    DecisionCase(name: "nothing cached", local: LocalFacts(),
                 action: .download, bytes: 1000, mentions: ["nothing cached"]),
    DecisionCase(name: "nothing cached, size unknown", remote: F.remote(size: nil), local: LocalFacts(),
                 action: .download, bytes: nil, mentions: ["nothing cached"]),
    DecisionCase(name: "destination exists but syncr has no record of it",
                 local: LocalFacts(destination: F.written),
                 action: .download, bytes: 1000, mentions: ["no record"]),

    // A complete download.
    DecisionCase(name: "complete, same ETag, destination untouched",
                 local: LocalFacts(state: F.complete(), destination: F.written),
                 action: .skip, bytes: 0, mentions: ["ETag unchanged"]),
    DecisionCase(name: "complete, same Last-Modified, no ETag",
                 remote: F.remote(etag: nil, lastModified: F.lastModified),
                 local: LocalFacts(state: F.complete(etag: nil, lastModified: F.lastModified), destination: F.written),
                 action: .skip, bytes: 0, mentions: ["Last-Modified unchanged"]),
    // Weak comparison is enough to call a complete file unchanged (RFC 9110 §8.8.3.2).
    DecisionCase(name: "complete, same weak ETag",
                 remote: F.remote(etag: F.weakV1),
                 local: LocalFacts(state: F.complete(etag: F.weakV1), destination: F.written),
                 action: .skip, bytes: 0, mentions: ["ETag unchanged"]),
    DecisionCase(name: "complete, remote ETag changed",
                 remote: F.remote(etag: F.strongV2),
                 local: LocalFacts(state: F.complete(), destination: F.written),
                 action: .download, bytes: 1000, mentions: ["\"v1\"", "\"v2\""]),
    DecisionCase(name: "complete, remote Last-Modified changed",
                 remote: F.remote(etag: nil, lastModified: F.laterModified),
                 local: LocalFacts(state: F.complete(etag: nil, lastModified: F.lastModified), destination: F.written),
                 action: .download, bytes: 1000, mentions: [F.lastModified, F.laterModified]),
    DecisionCase(name: "complete, remote size changed",
                 remote: F.remote(size: 2000),
                 local: LocalFacts(state: F.complete(), destination: F.written),
                 action: .download, bytes: 2000, mentions: ["1000", "2000"]),
    DecisionCase(name: "complete, destination missing, data gone from the cache",
                 local: LocalFacts(state: F.complete()),
                 action: .download, bytes: 1000, mentions: ["missing"]),
    DecisionCase(name: "complete, destination missing, complete data still in the cache",
                 local: LocalFacts(state: F.complete(), dataSize: 1000),
                 action: .resume, offset: 1000, bytes: 0, mentions: ["cache"]),
    DecisionCase(name: "complete, destination changed locally",
                 local: LocalFacts(state: F.complete(), destination: F.edited),
                 action: .download, bytes: 1000, mentions: ["changed"]),
    DecisionCase(name: "complete, destination changed locally, complete data still in the cache",
                 local: LocalFacts(state: F.complete(), dataSize: 1000, destination: F.edited),
                 action: .resume, offset: 1000, bytes: 0, mentions: ["cache", "replace"]),

    // A partial download.
    DecisionCase(name: "partial, same strong ETag, ranges accepted",
                 local: LocalFacts(state: F.partial(good: 400), dataSize: 400),
                 action: .resume, offset: 400, bytes: 600, mentions: ["400 B", "ETag unchanged"]),
    // Bytes past `good` were written but never made durable: only `good` counts.
    DecisionCase(name: "partial, data file longer than the record",
                 local: LocalFacts(state: F.partial(good: 400), dataSize: 650),
                 action: .resume, offset: 400, bytes: 600, mentions: ["400 B"]),
    DecisionCase(name: "partial, weak ETag only, no Last-Modified",
                 remote: F.remote(etag: F.weakV1),
                 local: LocalFacts(state: F.partial(etag: F.weakV1), dataSize: 400),
                 action: .restart, bytes: 1000, mentions: ["strong ETag"]),
    DecisionCase(name: "partial, Last-Modified only",
                 remote: F.remote(etag: nil, lastModified: F.lastModified),
                 local: LocalFacts(state: F.partial(etag: nil, lastModified: F.lastModified), dataSize: 400),
                 action: .resume, offset: 400, bytes: 600, mentions: ["Last-Modified unchanged"]),
    // A weak ETag cannot go in If-Range, but Last-Modified can.
    // RFC 9110 §13.1.5: no date in If-Range once the server sent an entity tag, and a weak
    // tag cannot be used at all, so nothing is fit to resume against.
    DecisionCase(name: "partial, weak ETag and Last-Modified",
                 remote: F.remote(etag: F.weakV1, lastModified: F.lastModified),
                 local: LocalFacts(state: F.partial(etag: F.weakV1, lastModified: F.lastModified), dataSize: 400),
                 action: .restart, offset: 0, bytes: 1000, mentions: ["strong ETag"]),
    DecisionCase(name: "partial, no validators at all",
                 remote: F.remote(etag: nil),
                 local: LocalFacts(state: F.partial(etag: nil), dataSize: 400),
                 action: .restart, bytes: 1000, mentions: ["Last-Modified"]),
    DecisionCase(name: "partial, server no longer accepts ranges",
                 remote: F.remote(acceptsRanges: false),
                 local: LocalFacts(state: F.partial(), dataSize: 400),
                 action: .restart, bytes: 1000, mentions: ["range"]),
    DecisionCase(name: "partial, remote ETag changed",
                 remote: F.remote(etag: F.strongV2),
                 local: LocalFacts(state: F.partial(), dataSize: 400),
                 action: .restart, bytes: 1000, mentions: ["\"v1\"", "\"v2\""]),
    DecisionCase(name: "partial, remote Last-Modified changed",
                 remote: F.remote(etag: nil, lastModified: F.laterModified),
                 local: LocalFacts(state: F.partial(etag: nil, lastModified: F.lastModified), dataSize: 400),
                 action: .restart, bytes: 1000, mentions: [F.lastModified, F.laterModified]),
    DecisionCase(name: "partial longer than the remote file (size not recorded)",
                 remote: F.remote(size: 500),
                 local: LocalFacts(state: F.partial(good: 800, size: nil), dataSize: 800),
                 action: .restart, bytes: 500, mentions: ["longer", "800 B", "500 B"]),
    DecisionCase(name: "partial longer than the remote file (recorded size changed)",
                 remote: F.remote(size: 500),
                 local: LocalFacts(state: F.partial(good: 800), dataSize: 800),
                 action: .restart, bytes: 500, mentions: ["1000", "500"]),
    DecisionCase(name: "partial, data file shorter than its record",
                 local: LocalFacts(state: F.partial(good: 400), dataSize: 300),
                 action: .restart, bytes: 1000, mentions: ["shorter"]),
    DecisionCase(name: "partial, data file gone",
                 local: LocalFacts(state: F.partial(good: 400)),
                 action: .download, bytes: 1000, mentions: ["gone"]),
    DecisionCase(name: "partial, remote size unknown",
                 remote: F.remote(size: nil),
                 local: LocalFacts(state: F.partial(good: 400, size: nil), dataSize: 400),
                 action: .restart, bytes: nil, mentions: ["size"]),

    // Pinned checksums.
    DecisionCase(name: "pinned, no record, destination digests match", checksums: F.pinned,
                 local: LocalFacts(destination: F.written, destinationDigests: ["sha256": F.sha]),
                 action: .skip, bytes: 0, mentions: ["sha256 pinned for it"]),
    // Pinned by the manifest or by the lockfile (`--locked`): the reason names neither.
    DecisionCase(name: "pinned, no record, destination digests differ", checksums: F.pinned,
                 local: LocalFacts(destination: F.written, destinationDigests: ["sha256": F.otherSHA]),
                 action: .download, bytes: 1000, mentions: ["does not match the sha256 pinned for it"]),
    // The destination is the wanted file, whatever the cache or the server say about versions.
    DecisionCase(name: "pinned, destination digests match, remote ETag changed", checksums: F.pinned,
                 remote: F.remote(etag: F.strongV2),
                 local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.written,
                                   destinationDigests: ["sha256": F.sha]),
                 action: .skip, bytes: 0, mentions: ["sha256"]),
    DecisionCase(name: "pinned, destination edited and digests differ", checksums: F.pinned,
                 local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.edited,
                                   destinationDigests: ["sha256": F.otherSHA]),
                 action: .download, bytes: 1000, mentions: ["sha256"]),
    DecisionCase(name: "pinned, verified download, destination untouched (no digests needed)", checksums: F.pinned,
                 local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.written),
                 action: .skip, bytes: 0, mentions: ["ETag unchanged"]),
    DecisionCase(name: "checksum added after the download, destination matches", checksums: F.pinned,
                 local: LocalFacts(state: F.complete(), destination: F.written, destinationDigests: ["sha256": F.sha]),
                 action: .skip, bytes: 0, mentions: ["sha256"]),
    DecisionCase(name: "checksum added after the download, destination differs", checksums: F.pinned,
                 local: LocalFacts(state: F.complete(), destination: F.written,
                                   destinationDigests: ["sha256": F.otherSHA]),
                 action: .download, bytes: 1000, mentions: ["sha256"]),
    DecisionCase(name: "two checksums pinned, only one matches",
                 checksums: [.sha256(F.sha), .md5("5d41402abc4b2a76b9719d911017c592")],
                 local: LocalFacts(destination: F.written,
                                   destinationDigests: ["sha256": F.sha, "md5": "00000000000000000000000000000000"]),
                 action: .download, bytes: 1000, mentions: ["sha256"]),

    // The destination is in the way: the plan fails the entry, as apply would.
    DecisionCase(name: "destination is a folder",
                 local: LocalFacts(state: F.complete(), destinationBlocked: true),
                 action: .error, bytes: nil, mentions: ["not a regular file"]),
    DecisionCase(name: "destination is a folder, nothing cached",
                 local: LocalFacts(destinationBlocked: true),
                 action: .error, bytes: nil, mentions: ["not a regular file"]),
]

@Suite(.timeLimit(.minutes(10))) struct PlannerTests {
    @Test(arguments: decisionTable)
    func decide(_ row: DecisionCase) {
        let decision = Planner.decide(checksums: row.checksums, remote: row.remote, local: row.local)
        #expect(decision.action == row.action)
        #expect(decision.offset == row.offset)
        #expect(decision.bytes == row.bytes)
        #expect(!decision.reason.isEmpty)
        #expect(!decision.reason.contains("\n"), "a reason is one line")
        for fact in row.mentions {
            #expect(decision.reason.contains(fact), "reason \"\(decision.reason)\" should mention \(fact)")
        }
    }

    /// RFC 9110 §13.1.5: If-Range needs a strong comparison. Apply sends the record's validator
    /// in If-Range; when the server's current validator does not match it strongly, the server
    /// answers with the whole file and apply restarts, so the plan must not promise a resume.
    /// - strong "v1" cached, server now sends W/"v1" (nginx does so when it compresses on the fly);
    /// - weak ETag and Last-Modified cached, same weak ETag but a newer Last-Modified: the If-Range
    ///   would carry the old date.
    @Test(arguments: [
              DecisionCase(name: "partial with strong ETag, server now sends it weak",
                           remote: F.remote(etag: F.weakV1),
                           local: LocalFacts(state: F.partial(etag: F.strongV1), dataSize: 400),
                           action: .restart, bytes: 1000, mentions: []),
              DecisionCase(name: "partial with weak ETag and Last-Modified, Last-Modified changed",
                           remote: F.remote(etag: F.weakV1, lastModified: F.laterModified),
                           local: LocalFacts(state: F.partial(etag: F.weakV1, lastModified: F.lastModified),
                                             dataSize: 400),
                           action: .restart, bytes: 1000, mentions: [F.lastModified, F.laterModified]),
          ])
    func resumeNeedsAStrongMatch(_ row: DecisionCase) {
        decide(row)
    }

    @Test func resumeReasonNamesOffsetAndTotal() {
        let decision = Planner.decide(checksums: [], remote: F.remote(size: 1_048_576),
                                      local: LocalFacts(state: F.partial(good: 262_144, size: 1_048_576),
                                                        dataSize: 262_144))
        #expect(decision == Decision(action: .resume, offset: 262_144, bytes: 786_432,
                                     reason: "256.0 KiB of 1.0 MiB cached, ETag unchanged"))
    }
}

/// When the destination must be hashed before deciding: only with pinned checksums that the
/// record cannot vouch for, so an unchanged verified file is never read again.
struct DigestNeedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var checksums: [Checksum] = F.pinned
    var remote: RemoteResource = F.remote()
    var local: LocalFacts
    var needed: Bool

    var testDescription: String { name }
}

let digestNeedTable: [DigestNeedCase] = [
    DigestNeedCase(name: "no checksums pinned", checksums: [],
                   local: LocalFacts(destination: F.written), needed: false),
    DigestNeedCase(name: "no destination",
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.sha])), needed: false),
    DigestNeedCase(name: "destination is a folder",
                   local: LocalFacts(destinationBlocked: true), needed: false),
    DigestNeedCase(name: "digests already computed",
                   local: LocalFacts(destination: F.written, destinationDigests: ["sha256": F.sha]), needed: false),
    DigestNeedCase(name: "verified, destination untouched, remote unchanged",
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.written),
                   needed: false),
    DigestNeedCase(name: "destination exists without a record",
                   local: LocalFacts(destination: F.written), needed: true),
    DigestNeedCase(name: "checksum added to the manifest after a verified download",
                   local: LocalFacts(state: F.complete(), destination: F.written), needed: true),
    DigestNeedCase(name: "checksum in the manifest changed",
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.otherSHA]), destination: F.written),
                   needed: true),
    DigestNeedCase(name: "second checksum added", checksums: F.pinned + [.md5("5d41402abc4b2a76b9719d911017c592")],
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.written),
                   needed: true),
    DigestNeedCase(name: "destination edited",
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.edited),
                   needed: true),
    DigestNeedCase(name: "remote changed", remote: F.remote(etag: F.strongV2),
                   local: LocalFacts(state: F.complete(verified: ["sha256": F.sha]), destination: F.written),
                   needed: true),
    DigestNeedCase(name: "only a partial record",
                   local: LocalFacts(state: F.partial(), dataSize: 400, destination: F.written), needed: true),
]

@Suite(.timeLimit(.minutes(10))) struct DestinationDigestTests {
    @Test(arguments: digestNeedTable)
    func needsDestinationDigest(_ row: DigestNeedCase) {
        #expect(Planner.needsDestinationDigest(checksums: row.checksums, remote: row.remote, local: row.local)
            == row.needed)
    }

    /// The flow the session follows: ask whether to hash, hash, decide.
    @Test func checksumAddedAfterVerifiedDownloadIsCheckedOnceThenSkipped() {
        var local = LocalFacts(state: F.complete(), destination: F.written)
        #expect(Planner.needsDestinationDigest(checksums: F.pinned, remote: F.remote(), local: local))
        local.destinationDigests = ["sha256": F.sha]
        #expect(!Planner.needsDestinationDigest(checksums: F.pinned, remote: F.remote(), local: local))
        #expect(Planner.decide(checksums: F.pinned, remote: F.remote(), local: local).action == .skip)
    }

    /// An unpacked folder is kept only when the record vouches for its archive against the
    /// pinned SHA-256 (the manifest's, or a lock's in a locked run): unpacked before it was
    /// pinned, it is unpacked again from the cached archive, which the verify stage hashes.
    @Test func unpackedFolderIsKeptOnlyWhenItsArchiveWasCheckedAgainstThePin() {
        var state = F.complete()
        state.destinationTree = "tree-1"
        let cached = UnpackFacts(state: state, dataSize: F.size, tree: "tree-1")
        #expect(Planner.decideUnpacked(remote: F.remote(), local: cached).action == .skip)
        let unchecked = Planner.decideUnpacked(checksums: F.pinned, remote: F.remote(), local: cached)
        #expect(unchecked.action == .resume && unchecked.offset == F.size && unchecked.bytes == 0)
        #expect(unchecked.reason.contains("not checked against the sha256"), "\(unchecked.reason)")
        var gone = cached
        gone.dataSize = nil
        #expect(Planner.decideUnpacked(checksums: F.pinned, remote: F.remote(), local: gone).action == .download)
        state.verified = ["sha256": F.sha]
        let checked = UnpackFacts(state: state, dataSize: nil, tree: "tree-1")
        #expect(Planner.decideUnpacked(checksums: F.pinned, remote: F.remote(), local: checked).action == .skip)
    }
}

@Suite(.timeLimit(.minutes(10))) struct CompareTests {
    @Test func sameETag() {
        #expect(Planner.compare(F.complete(), F.remote()) == .same("same size, ETag unchanged"))
    }

    @Test func sizeIsComparedBeforeValidators() {
        #expect(Planner.compare(F.complete(), F.remote(size: 999)) == .different("size 1000 → 999 bytes"))
    }

    @Test func serverStoppedSendingETag() {
        guard case .different(let why) = Planner.compare(F.complete(), F.remote(etag: nil)) else {
            Issue.record("expected different")
            return
        }
        #expect(why.contains("no longer sends an ETag"))
    }

    @Test func serverStartedSendingETag() {
        guard case .different(let why) = Planner.compare(F.complete(etag: nil), F.remote()) else {
            Issue.record("expected different")
            return
        }
        #expect(why.contains("now sends an ETag"))
    }

    @Test func sizeWithoutValidatorsCountsAsSame() {
        #expect(Planner.compare(F.complete(etag: nil), F.remote(etag: nil))
            == .same("same size; the server gives no validators"))
    }

    @Test func neitherSizeNorValidators() {
        var state = F.partial(size: nil, etag: nil)
        state.good = 10
        guard case .different = Planner.compare(state, F.remote(size: nil, etag: nil)) else {
            Issue.record("expected different")
            return
        }
    }
}
