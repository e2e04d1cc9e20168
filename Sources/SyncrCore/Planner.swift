import SyncrHTTP
import SyncrManifest

/// What is on the local disk for one entry.
public struct LocalFacts: Sendable, Equatable {
    /// The cache record, if any.
    public var state: EntryState?
    /// Size of the cached data file, nil when there is none.
    public var dataSize: Int64?
    /// The destination file's fingerprint, nil when it does not exist (or is not a file).
    public var destination: FileFingerprint?
    /// The destination exists but is a folder or something else that is not a regular file.
    public var destinationBlocked: Bool
    /// Why the destination's folder cannot be made (a file or a symbolic link stands in its
    /// path), e.g. `out/lib: a file is in the way`; nil when it is there or can be made.
    public var folderBlocked: String?
    /// Digests of the destination, computed only when the cheap checks could not decide.
    public var destinationDigests: [String: String]?

    /// Creates facts from their parts; the defaults describe an empty cache and no destination.
    public init(state: EntryState? = nil, dataSize: Int64? = nil, destination: FileFingerprint? = nil,
                destinationBlocked: Bool = false, destinationDigests: [String: String]? = nil) {
        self.state = state
        self.dataSize = dataSize
        self.destination = destination
        self.destinationBlocked = destinationBlocked
        self.destinationDigests = destinationDigests
    }
}

/// What is on disk for a download unpacked into a folder (`unzip: true`).
public struct UnpackFacts: Sendable, Equatable {
    /// The cache record, if any.
    public var state: EntryState?
    /// Size of the archive kept in the cache, nil when there is none.
    public var dataSize: Int64?
    /// The folder's shape now (`FolderReplace.fingerprint`), nil when there is no folder.
    public var tree: String?
    /// A file (not a folder) stands where the folder goes.
    public var destinationBlocked: Bool
    /// Why the folder above the destination cannot be made, as `LocalFacts.folderBlocked`.
    public var folderBlocked: String?
    /// The record says syncr unpacked the folder there (its `destination` is this entry's),
    /// also where it vouches for no archive any more (an unpack or a download that failed).
    public var unpackedHere = false

    /// Creates facts from their parts; the defaults describe an empty cache and no folder.
    public init(state: EntryState? = nil, dataSize: Int64? = nil, tree: String? = nil, destinationBlocked: Bool = false) {
        self.state = state
        self.dataSize = dataSize
        self.tree = tree
        self.destinationBlocked = destinationBlocked
    }
}

/// A decision for one download, with its one-line reason.
public struct Decision: Sendable, Equatable {
    /// What apply will do with the download.
    public var action: Action
    /// Where the fetch starts: the cached bytes kept (0 unless resuming).
    public var offset: Int64
    /// Bytes to fetch; nil when the size is unknown.
    public var bytes: Int64?
    /// One line saying why, for the plan.
    public var reason: String
    /// What stands where apply must place the download, when something does: the action is
    /// then `.error`, and the plan fails the entry as apply would (a plan that said "apply
    /// will fail" and exited 0 let a CI gate pass).
    public var blocked: Blockage? = nil

    /// Something in the way of a download's destination.
    public enum Blockage: Sendable, Equatable {
        /// Something other than what the entry makes stands at the destination: a folder or a
        /// device where a file goes, or (`wantsFolder`) a file where an unpacked folder goes.
        case destination(wantsFolder: Bool)
        /// The destination's folder cannot be made: `obstacle` says what is in the way and where.
        case folder(obstacle: String)

        /// The failure apply gives, for the entry writing to `destination` (as in the manifest).
        public func error(destination: String) -> SyncError {
            switch self {
            case .destination(let wantsFolder): return .destinationBlocked(destination: destination, wantsFolder: wantsFolder)
            case .folder(let obstacle): return .folderBlocked(destination: destination, obstacle: obstacle)
            }
        }
    }

    static func blocked(_ blockage: Blockage, _ reason: String) -> Decision {
        Decision(action: .error, offset: 0, bytes: nil, reason: reason, blocked: blockage)
    }
}

/// Decides what to do with each download: pure, given what the server said and what is on disk.
public enum Planner {
    /// Whether the destination must be hashed before `decide` can answer: only when checksums
    /// are pinned and the record cannot vouch for the destination as it is now.
    public static func needsDestinationDigest(checksums: [Checksum], remote: RemoteResource, local: LocalFacts) -> Bool {
        guard !checksums.isEmpty, local.destination != nil, local.destinationDigests == nil else { return false }
        if let state = local.state, state.complete, state.destinationFingerprint == local.destination,
           covers(state.verified, checksums), case .same = compare(state, remote) {
            return false
        }
        return true
    }

    /// Decides what to do with one download from what the server said and what is on disk; never
    /// touches the disk or network, so every case can be tested from values.
    /// - Parameters:
    ///   - checksums: the entry's pinned checksums; a destination that matches them is kept.
    ///   - remote: the probe's answer (size, validators).
    ///   - local: the cache record and destination; `destinationDigests` filled in when
    ///     `needsDestinationDigest` asked for them.
    public static func decide(checksums: [Checksum], remote: RemoteResource, local: LocalFacts) -> Decision {
        let size = remote.size
        func fetchAll(_ action: Action, _ reason: String) -> Decision {
            Decision(action: action, offset: 0, bytes: size, reason: reason)
        }
        if local.destinationBlocked {
            return .blocked(.destination(wantsFolder: false), "the destination exists but is not a regular file")
        }
        if let blocked = local.folderBlocked {
            return .blocked(.folder(obstacle: blocked), "its folder cannot be made: \(blocked)")
        }
        // A destination that matches the pinned checksums is the wanted file, whatever the cache says.
        if let digests = local.destinationDigests, !checksums.isEmpty {
            if checksums.allSatisfy({ digests[$0.algorithm] == $0.hex }) {
                return Decision(action: .skip, offset: 0, bytes: 0,
                                reason: "destination matches the \(checksums.map(\.algorithm).joined(separator: " and ")) pinned for it")
            }
        }
        let state = local.state
        if let state, state.complete {
            let comparison = compare(state, remote)
            guard case .same(let how) = comparison else {
                return fetchAll(.download, "the remote file changed since the last download (\(comparison.text))")
            }
            let inCache = local.dataSize != nil && local.dataSize == state.size
            guard let destination = local.destination else {
                if inCache, let total = state.size {
                    // The finished file never reached its destination (e.g. the move failed).
                    return Decision(action: .resume, offset: total, bytes: 0,
                                    reason: "complete in the cache; it will be moved into place")
                }
                return fetchAll(.download, "the destination is missing")
            }
            if state.destinationFingerprint != destination {
                if inCache, let total = state.size, local.destinationDigests == nil {
                    return Decision(action: .resume, offset: total, bytes: 0,
                                    reason: "complete in the cache; it will replace the changed destination")
                }
                if local.destinationDigests != nil {
                    return fetchAll(.download, "the destination does not match the \((checksums.first?.algorithm ?? "checksum")) pinned for it")
                }
                return fetchAll(.download, "the destination was changed since syncr wrote it")
            }
            if !covers(state.verified, checksums) {
                return fetchAll(.download, "the destination does not match the \((checksums.first?.algorithm ?? "checksum")) pinned for it")
            }
            return Decision(action: .skip, offset: 0, bytes: 0, reason: "up to date (\(how))")
        }
        if let state, state.cachedBytes > 0 {
            let cached = state.cachedBytes
            let recordedEnd = state.ranges.ranges.last?.upperBound ?? state.good
            if let dataSize = local.dataSize, dataSize < recordedEnd {
                return fetchAll(.restart, "the cached data is shorter than its record")
            }
            if local.dataSize == nil {
                return fetchAll(.download, "the cached data is gone")
            }
            let comparison = compare(state, remote)
            guard case .same = comparison else {
                return fetchAll(.restart, "the remote file changed since the partial download (\(comparison.text))")
            }
            guard let total = size else {
                return fetchAll(.restart, "the server does not give the file's size, so \(ByteSize.format(cached)) cached cannot be continued")
            }
            if recordedEnd > total {
                return fetchAll(.restart, "the partial download (\(ByteSize.format(cached))) is longer than the remote file (\(ByteSize.format(total)))")
            }
            guard state.ifRangeValidator != nil else {
                return fetchAll(.restart, "the server gives no strong ETag or Last-Modified to resume against safely")
            }
            guard remote.acceptsRanges else {
                return fetchAll(.restart, "the server does not accept range requests")
            }
            let what = state.etag.map { $0.isWeak ? "Last-Modified unchanged" : "ETag unchanged" } ?? "Last-Modified unchanged"
            let pieces = state.ranges.ranges.count > 1 ? " in \(state.ranges.ranges.count) pieces" : ""
            return Decision(action: .resume, offset: state.good, bytes: total - cached,
                            reason: "\(ByteSize.format(cached)) of \(ByteSize.format(total)) cached\(pieces), \(what)")
        }
        if local.destinationDigests != nil {
            return fetchAll(.download, "the destination does not match the \((checksums.first?.algorithm ?? "checksum")) pinned for it")
        }
        if local.destination != nil {
            return fetchAll(.download, "the destination exists but syncr has no record of it")
        }
        return fetchAll(.download, "nothing cached")
    }

    /// The decision for a download unpacked into a folder. The archive stays in the cache after
    /// unpacking, so a folder that was changed or removed is unpacked again without a download.
    /// - Parameter checksums: the entry's pinned checksums (the manifest's, or a lock's): a
    ///   folder unpacked from an archive the record does not vouch for against them is unpacked
    ///   again, from the cached archive once it has been checked, or from a new download.
    public static func decideUnpacked(checksums: [Checksum] = [], remote: RemoteResource, local: UnpackFacts) -> Decision {
        let size = remote.size
        if local.destinationBlocked {
            return .blocked(.destination(wantsFolder: true), "a file stands where the folder goes")
        }
        if let blocked = local.folderBlocked {
            return .blocked(.folder(obstacle: blocked), "the folder above it cannot be made: \(blocked)")
        }
        guard let state = local.state, state.complete else {
            // Partial or nothing: the same rules as for a file, with no destination file.
            var decision = decide(checksums: [], remote: remote, local: LocalFacts(state: local.state, dataSize: local.dataSize))
            if local.tree != nil, !local.unpackedHere {
                // The swap deletes the folder whole: apply refuses where it would take anything
                // the archive does not bring back (`Downloader.keepsForeignFiles`).
                decision.reason += "; a folder syncr has no record of unpacking is there: apply replaces it only if "
                    + "the archive holds everything in it"
            }
            return decision
        }
        let comparison = compare(state, remote)
        guard case .same(let how) = comparison else {
            return Decision(action: .download, offset: 0, bytes: size,
                            reason: "the remote archive changed since it was unpacked (\(comparison.text))")
        }
        let vouched = covers(state.verified, checksums)
        if let tree = local.tree, tree == state.destinationTree, vouched {
            return Decision(action: .skip, offset: 0, bytes: 0, reason: "up to date (unpacked; \(how))")
        }
        let why = !vouched ? "the archive was not checked against the \(checksums[0].algorithm) pinned for it"
            : local.tree == nil ? "the folder is missing"
            : "the folder was changed since it was unpacked: it is replaced as a whole, and what was added to it or changed there goes"
        if let total = state.size, local.dataSize == total {
            return Decision(action: .resume, offset: total, bytes: 0, reason: "\(why); unpacking again from the cache")
        }
        return Decision(action: .download, offset: 0, bytes: size, reason: "\(why), and the archive is no longer cached")
    }

    static func covers(_ verified: [String: String], _ checksums: [Checksum]) -> Bool {
        checksums.allSatisfy { verified[$0.algorithm] == $0.hex }
    }

    /// How a cached version compares with what the server says now.
    enum Comparison: Equatable {
        case same(String)
        case different(String)

        var text: String {
            switch self {
            case .same(let t), .different(let t): return t
            }
        }
    }

    static func compare(_ state: EntryState, _ remote: RemoteResource) -> Comparison {
        if let a = state.size, let b = remote.size, a != b {
            return .different("size \(a) → \(b) bytes")
        }
        // Every validator both sides have must agree: an ETag that turned weak (nginx does that
        // when it starts compressing) or a newer date next to an unchanged weak tag both mean the
        // bytes may differ, and an If-Range built from the old record would not match anyway.
        if (state.etag == nil) != (remote.etag == nil) {
            return .different(remote.etag == nil ? "the server no longer sends an ETag" : "the server now sends an ETag")
        }
        if let a = state.etag, let b = remote.etag, a != b {
            return .different("ETag \(a.headerValue) → \(b.headerValue)")
        }
        if let a = state.lastModified, let b = remote.lastModified, a != b {
            return .different("Last-Modified \(a) → \(b)")
        }
        if state.etag != nil {
            return .same("same size, ETag unchanged")
        }
        if state.lastModified != nil && remote.lastModified != nil {
            return .same("same size, Last-Modified unchanged")
        }
        if state.size != nil && remote.size != nil {
            return .same("same size; the server gives no validators")
        }
        return .different("the server gives neither size nor validators")
    }
}
