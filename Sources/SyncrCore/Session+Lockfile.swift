import SyncrDigest
import SyncrHTTP
import SyncrManifest

/// One download that `syncr lock` could not pin: its destination and why.
public struct LockFailure: Error, Sendable {
    /// The entry's `to`, as written.
    public var to: String
    /// What went wrong, masked.
    public var message: String
    /// The run was interrupted (SIGINT, SIGTERM) before this download was hashed: said once
    /// for all such downloads, not one line each.
    public var interrupted = false

    /// A failure for the download to `to`.
    public init(to: String, message: String) {
        self.to = to
        self.message = message
    }
}

extension Session {
    /// Asks every server about its download and returns the lock of the manifest: URL as written,
    /// the final URL (masked, without its query), size, strong ETag, Last-Modified, and the
    /// SHA-256 when the manifest pins one or the record of a verified download of this very
    /// version holds one.
    /// - Returns: the lock of the downloads whose server answered, and those whose did not.
    public func lockfile() async -> (lock: Lockfile, failures: [LockFailure]) {
        let width = max(jobs, min(16, manifest.downloads.count))
        let results = await Self.mapBounded(manifest.downloads, width: width) { d -> Result<LockedEntry, LockFailure> in
            if d.s3?.isPrefix == true { return .failure(LockFailure(to: d.to, message: LockCheck.prefixProblem)) }
            switch await self.probe(d, reporter: self.reporter) {
            case .failure(let failure):
                return .failure(LockFailure(to: d.to, message: self.redactor.scrub(failure.description)))
            case .success(let remote):
                return .success(self.lockedEntry(d, remote: remote))
            }
        }
        var entries: [LockedEntry] = []
        var failures: [LockFailure] = []
        for r in results {
            switch r {
            case .success(let e): entries.append(e)
            case .failure(let f): failures.append(f)
            }
        }
        return (Lockfile(manifest: Lockfile.manifestName(forManifest: manifest.path), entries: entries), failures)
    }

    func lockedEntry(_ d: Download, remote: RemoteResource) -> LockedEntry {
        var entry = LockedEntry(to: d.to, url: redactor.scrub(d.url.written),
                                finalURL: redactor.scrubLocation(remote.finalURL), size: remote.size,
                                etag: remote.etag.flatMap { $0.isWeak ? nil : $0.headerValue },
                                lastModified: remote.lastModified, unzip: d.unzip)
        if case .sha256(let hex)? = d.checksums.first(where: { $0.algorithm == "sha256" }) {
            entry.sha256 = hex
        } else if let state = cache.loadState(Cache.key(for: d)), state.complete,
                  case .same = Planner.compare(state, remote) {
            entry.sha256 = state.verified["sha256"]
        }
        return entry
    }

    /// For `syncr lock --hash`, after an apply: records the SHA-256 of every download whose
    /// record has none, hashing the destination the record vouches for (or, for `unzip:`, the
    /// archive kept in the cache). Returns the downloads it could not hash.
    public func recordMissingSHA256() async -> [LockFailure] {
        let failures = await Self.mapBounded(manifest.downloads, width: max(1, jobs)) { d -> LockFailure? in
            let key = Cache.key(for: d)
            guard var state = self.cache.loadState(key), state.complete else {
                return LockFailure(to: d.to, message: "not downloaded, so it cannot be hashed")
            }
            if state.verified["sha256"] != nil { return nil }
            let path: String
            if d.unzip {
                guard FS.fileSize(self.cache.dataPath(key)) == state.size else {
                    return LockFailure(to: d.to, message: "the archive is no longer in the cache")
                }
                path = self.cache.dataPath(key)
            } else {
                guard let fingerprint = state.destinationFingerprint, FS.fingerprint(d.destination) == fingerprint else {
                    return LockFailure(to: d.to, message: "the destination changed since syncr wrote it")
                }
                path = d.destination
            }
            do {
                let digests = try await BlockingIO.run { try FS.digests(of: path, algorithms: ["sha256"]) }
                state.verified["sha256"] = digests["sha256"]
                // Flushed with the others below: a record lost to a power cut costs a hash again.
                _ = try self.cache.save(state, key: key, durable: false, stateFile: true)
                return nil
            } catch is Interrupted {
                var failure = LockFailure(to: d.to, message: "interrupted before its SHA-256 was made")
                failure.interrupted = true
                return failure
            } catch {
                return LockFailure(to: d.to, message: self.redactor.scrub("\(error)"))
            }
        }.compactMap { $0 }
        try? cache.finishRecords()
        return failures
    }
}
