import SyncrHTTP
import SyncrManifest

/// The rules of a locked run (`--locked`), pure given the manifest, the lock, the record and the
/// server's answer.
public enum LockCheck {
    /// Why a manifest cannot run against a lock: one line per download the lock does not cover
    /// (missing, another URL, another pinned SHA-256), each saying to run `syncr lock`.
    /// - Parameter redactor: masks literal credentials in the URLs, as `syncr lock` wrote them.
    public static func problems(_ manifest: Manifest, lock: Lockfile, lockPath: String, redactor: Redactor) -> [String] {
        var problems: [String] = []
        for d in manifest.downloads {
            let name = "\(manifest.path): downloads[\(d.index)] (to: \(d.to))"
            guard let entry = lock.entry(to: d.to) else {
                problems.append("\(name) is not in \(lockPath); run 'syncr lock' to add it")
                continue
            }
            let url = redactor.scrub(d.url.written)
            if entry.url != url {
                problems.append("\(name): \(lockPath) locks \(entry.url), the manifest asks for \(url); run 'syncr lock' to lock the new URL")
            }
            if case .sha256(let pinned)? = d.checksums.first(where: { $0.algorithm == "sha256" }),
               let locked = entry.sha256, locked != pinned {
                problems.append("\(name): the manifest pins sha256 \(pinned), \(lockPath) has \(locked); run 'syncr lock'")
            }
        }
        return problems
    }

    /// What changed on the server since the lock was written (size, ETag), or nil when the
    /// answer matches it. Last-Modified alone is not held against the server: CDN nodes
    /// disagree about it for the same bytes.
    public static func drift(_ entry: LockedEntry, _ remote: RemoteResource) -> String? {
        if let locked = entry.size, let now = remote.size, locked != now {
            return "size \(locked) → \(now) bytes"
        }
        if let locked = entry.etag {
            guard let now = remote.etag?.headerValue else { return "the server no longer sends an ETag (locked \(locked))" }
            if now != locked { return "ETag \(locked) → \(now)" }
        }
        return nil
    }

    /// Whether the record vouches that the destination is the file verified against the lock's
    /// SHA-256, unchanged since (same size, modification time and inode): then it is up to date
    /// without asking the server.
    static func vouches(_ state: EntryState?, for entry: LockedEntry, destination: FileFingerprint?, tree: String?,
                        unzip: Bool) -> Bool {
        guard let sha = entry.sha256, let state, state.complete, state.verified["sha256"] == sha else { return false }
        if unzip { return state.destinationTree != nil && state.destinationTree == tree }
        return state.destinationFingerprint != nil && state.destinationFingerprint == destination
    }
}
