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
        // Every shard of a sharded run checks the whole manifest: per entry one lookup and one
        // comparison of strings, the name and the masking only for an entry that fails.
        for d in manifest.downloads {
            var name: String { "\(manifest.path): downloads[\(d.index)] (to: \(d.to))" }
            if d.s3?.isPrefix == true {
                problems.append("\(name): \(prefixProblem)")
                continue
            }
            guard let entry = lock.entry(to: d.to) else {
                problems.append("\(name) is not in \(lockPath); run 'syncr lock' to add it")
                continue
            }
            // Both masked by today's rules: a lock written when fewer query names were taken
            // for credentials (`?ticket=` in clear) still matches, and is never printed as is.
            // Most locks match as written (a URL with no credential): only the others are masked.
            if entry.url != d.url.written, case let url = redactor.scrub(d.url.written), entry.url != url,
               case let locked = redactor.scrub(entry.url), locked != url {
                problems.append("\(name): \(lockPath) locks \(locked), the manifest asks for \(url); run 'syncr lock' to lock the new URL")
            }
            if case .sha256(let pinned)? = d.checksums.first(where: { $0.algorithm == "sha256" }),
               let locked = entry.sha256, locked != pinned {
                problems.append("\(name): the manifest pins sha256 \(pinned), \(lockPath) has \(locked); run 'syncr lock'")
            }
        }
        return problems
    }

    /// Whose lock a lockfile is, by its `manifest:`.
    public enum Owner: Sendable, Equatable {
        /// The manifest run against it: `manifest:` names it (or a file that is it: a link, or
        /// another spelling of its name on a disk that ignores case), or names nothing.
        case this
        /// Another manifest beside the lock, at this path (the lock's folder and `manifest:`):
        /// `data.yml` and `data.yaml` share `data.lock`, and each `syncr lock` wrote over the
        /// other's.
        case sibling(String)
        /// A manifest not beside the lock (renamed or removed), at this path if it were.
        case gone(String)
    }

    /// Whose lock `lock` (read from `lockPath`) is, for the manifest at `manifestPath`. Names
    /// are compared, not absolute paths: the lock and its manifest share a folder, so a project
    /// moved or checked out elsewhere keeps its lock. Only when the names differ are the files
    /// looked at (two `stat`s), to tell a link to the manifest from another manifest.
    public static func owner(of lock: Lockfile, lockPath: String, manifestPath: String) -> Owner {
        let named = lock.manifest
        guard !named.isEmpty, named != Lockfile.manifestName(forManifest: manifestPath) else { return .this }
        let path = besideLock(named, lockPath)
        if let other = FS.fingerprint(path), let this = FS.fingerprint(manifestPath),
           other.device == this.device, other.inode == this.inode {
            return .this
        }
        return FS.kind(path) == .missing ? .gone(path) : .sibling(path)
    }

    /// Why a run of the manifest at `manifestPath` cannot use the lock at `lockPath` (`--locked`,
    /// or `--shard` balancing by the lock's sizes), or nil when the lock is the manifest's own.
    public static func ownerProblem(_ lock: Lockfile, lockPath: String, manifestPath: String) -> String? {
        switch owner(of: lock, lockPath: lockPath, manifestPath: manifestPath) {
        case .this:
            return nil
        case .sibling(let other):
            return "\(lockPath) is the lockfile of \(other), not of \(manifestPath) (both manifests' "
                + "lockfiles are named \(lockPath)); rename one of the two manifests so that each has a lockfile of its own, "
                + "then run 'syncr lock' for the renamed one"
        case .gone(let other):
            let name = Lockfile.manifestName(forManifest: manifestPath)
            return "\(lockPath) was written for \(other), not for \(manifestPath), and there is no "
                + "such file; if it was renamed \(name), run 'syncr lock \(manifestPath)' to lock it under its new name "
                + "(or set 'manifest: \"\(name)\"' in \(lockPath) to keep what it locks)"
        }
    }

    /// `name` (a lock's `manifest:`) as a path from where `lockPath` is: in the lock's folder.
    static func besideLock(_ name: String, _ lockPath: String) -> String {
        if name.hasPrefix("/") { return name }
        return (lockPath.lastIndex(of: "/").map { String(lockPath[...$0]) } ?? "") + name
    }

    /// Why an `s3://` prefix has no place in a lock: a store may answer for the prefix itself
    /// (a folder marker), and a lock of that would pin nothing of the objects fetched.
    static let prefixProblem = "an s3:// prefix is listed when it runs, so a lock cannot pin its objects; "
        + "name each object as an entry of its own to lock it, or keep the prefix in a manifest run without --locked"

    /// What changed on the server since the lock was written (size, ETag, and where the URL
    /// leads), or nil when the answer matches it. Last-Modified is held against the server only
    /// where the lock has neither SHA-256 nor ETag (CDN nodes disagree about it for the same
    /// bytes, but there nothing else tells two files of one size apart).
    ///
    /// - Parameter finalURL: where the URL leads now, masked and without its query, as `syncr
    ///   lock` records it. Another place is named in front of any other change (a `${VAR}` in
    ///   the URL that now expands otherwise is a change of URL, not of the server's file). On
    ///   its own it is held against the server only where the lock has neither a SHA-256 nor
    ///   an ETag to tell two files apart: mirrors and CDNs may answer one URL from several
    ///   places, and a file checked by SHA-256 or ETag is known whatever place served it.
    public static func drift(_ entry: LockedEntry, _ remote: RemoteResource, finalURL: String? = nil) -> String? {
        var fileChanges: [String] = []
        if let locked = entry.size, let now = remote.size, locked != now {
            fileChanges.append("size \(locked) → \(now) bytes")
        } else if let locked = entry.etag {
            if let now = remote.etag?.headerValue {
                if now != locked { fileChanges.append("ETag \(locked) → \(now)") }
            } else {
                fileChanges.append("the server no longer sends an ETag (locked \(locked))")
            }
        } else if entry.sha256 == nil, let locked = entry.lastModified, let now = remote.lastModified, locked != now {
            // Nothing else tells two files of one size apart: a new date is taken for a new
            // file (a locked run placed another file of the same size). The way out of a CDN
            // whose nodes disagree about the date is to pin the content.
            fileChanges.append("Last-Modified \(locked) → \(now) (the lock has neither SHA-256 nor ETag, so the date is "
                + "all that tells two files of one size apart; pin the file by content with 'syncr lock --hash')")
        }
        var moved: String?
        if let locked = entry.finalURL, let now = finalURL, locked != now {
            moved = "the URL now leads to \(now), locked \(locked)"
        }
        if fileChanges.isEmpty {
            guard let moved, entry.sha256 == nil, entry.etag == nil else { return nil }
            // A server that sends each request to another mirror fails here on every run: said,
            // with the way to pin the file by its content instead.
            return moved + " (the lock has neither SHA-256 nor ETag to know the file by wherever it is served from; "
                + "if the server sends requests to changing mirrors, pin the file by content with 'syncr lock --hash')"
        }
        return ([moved].compactMap { $0 } + fileChanges).joined(separator: "; ")
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
