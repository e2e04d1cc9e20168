#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// `syncr lock [--hash] [MANIFEST]`: writes the lockfile beside the manifest.
enum LockCommand {
    static let help = """
    Usage: syncr lock [--hash] [--cache DIR] [--jobs N] [--quiet] [MANIFEST]

    Asks every server about its download and writes the lockfile beside the manifest, named
    after it (syncr.yml -> syncr.lock, data.yaml -> data.lock): one record per download,
    sorted by destination, with the URL as written (${VAR} unexpanded, never a secret), the
    final URL after redirects (masked, without its query), size, strong ETag, Last-Modified
    and SHA-256. The same servers give a byte-identical file. Check it in; then
    'syncr apply --locked' fetches exactly these files, or fails the entries that changed.

    The SHA-256 comes from the manifest when it pins one, else from the cache record of a
    verified download of that version. Uploads are not locked. Nothing is written when a
    server cannot be asked, nor over the lock of another manifest beside this one (data.yml
    and data.yaml share data.lock: rename one of them). A lock that cannot be read, or whose
    manifest is gone, is written over, with a note that says so.

    Options:
      --hash                Run apply's downloads first (every download not up to date is
                            fetched and placed at its destination, or unpacked), then hash
                            what the records lack, so every record has a SHA-256.
      --cache DIR           Use DIR as the cache folder instead of the manifest's 'cache:'.
      --jobs N              Ask up to N servers at once (default: defaults.jobs, 4).
      --quiet               Print only errors.
      -h, --help            Show this help.
    """

    static func run(_ options: LockOptions) async -> Int32 {
        if let code = CacheOption.refuse(options.cacheDirectory) { return code }
        guard var manifest = loadManifest(options.manifest, usesCache: options.cacheDirectory == nil) else { return ExitCode.invalidManifest }
        if let cache = options.cacheDirectory, let code = CacheOption.refuse(cache, for: manifest) { return code }
        manifest.uploads = []  // a lock pins what is fetched
        let path = Lockfile.path(forManifest: options.manifest)
        let session = Session(manifest: manifest, options: RunOptions(cacheDirectory: options.cacheDirectory, jobs: options.jobs))
        defer { session.close() }
        if let clash = clash(lockPath: path, cache: session.cache.directory) {
            Output.err("syncr: error: \(clash)")
            return ExitCode.invalidManifest
        }
        // Read before any server is asked: the lock there may be another manifest's.
        let previous: Lockfile?
        var replacing: String?
        do {
            previous = try LockfileReader.load(path: path)
        } catch {
            previous = nil
            replacing = "\(path) could not be read, and is written over; it said: " + error.description
        }
        switch previous.map({ LockCheck.owner(of: $0, lockPath: path, manifestPath: options.manifest) }) {
        case .sibling(let other)?:
            Output.err("syncr: error: " + Rendering.printable(foreignLock(other, lockPath: path, manifestPath: options.manifest)))
            return ExitCode.invalidManifest
        case .gone(let old)?:
            replacing = "\(path) was the lockfile of \(old), which is not there; it now locks \(options.manifest)"
        case .this?, nil:
            break
        }
        if options.hash && !manifest.downloads.isEmpty {
            if let code = await hashEverything(session, quiet: options.quiet) { return code }
        }
        let (lock, failures) = await session.lockfile()
        if Task.isCancelled { return ExitCode.failures }
        guard failures.isEmpty else {
            for f in failures { Output.err("syncr: error: cannot lock \(f.to): \(f.message)") }
            Output.err("syncr: \(path) was not written.")
            return ExitCode.failures
        }
        if let problem = ApplyOutput.write(lock.yaml, to: path) {
            Output.err("syncr: error: cannot write \(path): \(problem)")
            return ExitCode.failures
        }
        if let replacing { Output.err("syncr: note: " + Rendering.printable(replacing)) }
        if !options.quiet {
            let unhashed = lock.entries.filter { $0.sha256 == nil }.count
            var line = "syncr: \(previous == lock ? "\(path) is unchanged" : "wrote \(path)"): "
                + "\(lock.entries.count) download\(lock.entries.count == 1 ? "" : "s")"
            if unhashed > 0 {
                line += ", \(unhashed) without a SHA-256 (run 'syncr lock --hash' to pin \(unhashed == 1 ? "it" : "them"))"
            }
            Output.err(line + ".")
        }
        return ExitCode.success
    }

    /// `--hash`: an apply of the downloads under the cache lock, then the SHA-256 of whatever
    /// the records lack. Returns an exit code when it failed.
    static func hashEverything(_ session: Session, quiet: Bool) async -> Int32? {
        let lock: CacheLock
        switch await CacheLocking.acquire(directory: session.cache.directory, timeoutMilliseconds: 0, quiet: quiet) {
        case .locked(let held): lock = held
        case .failed(let code): return code
        }
        defer { lock.release() }
        // Said before the downloads, as apply says them: an unreadable netrc file is why the
        // hashing below may fail with a 401.
        for warning in session.applyWarnings() { Output.err("syncr: warning: lock --hash: \(warning)") }
        let report = await session.apply()
        if Task.isCancelled { return ExitCode.failures }
        for warning in report.warnings { Output.err("syncr: warning: lock --hash: \(warning)") }
        var failed = report.failed.map { LockFailure(to: $0.item.to, message: $0.error?.description ?? "failed") }
        if failed.isEmpty { failed = await session.recordMissingSHA256() }
        guard failed.isEmpty else {
            for f in failed where !f.interrupted { Output.err("syncr: error: lock --hash: cannot hash \(f.to): \(f.message)") }
            let stopped = failed.filter(\.interrupted).count
            if stopped > 0 {
                Output.err("syncr: lock --hash: interrupted before \(stopped) download(s) were hashed; run it again to hash them")
            }
            return ExitCode.failures
        }
        return nil
    }

    /// The lock at `lockPath` is another manifest's, and that manifest (`otherPath`) is beside
    /// it (`data.yaml`'s, when `data.yml` is locked): writing this one's would replace it. A lock
    /// whose manifest is gone (renamed) is written over, as is one that cannot be read, with a
    /// note that says so.
    static func foreignLock(_ otherPath: String, lockPath: String, manifestPath: String) -> String {
        "\(lockPath) is the lockfile of \(otherPath), which is beside it; the lock of \(manifestPath) would replace it "
            + "(both manifests' lockfiles are named \(lockPath)). Rename one of the two manifests so that each has a lockfile "
            + "of its own, or move \(lockPath) away if \(otherPath) needs no lock; \(lockPath) was not written"
    }

    /// The lockfile would replace the cache's own lock file (`cache: .` puts both at
    /// `syncr.lock` in the manifest's folder): a running apply would then lose its lock.
    static func clash(lockPath: String, cache: String) -> String? {
        func canonical(_ path: String) -> String {
            let slash = path.lastIndex(of: "/")
            let folder = slash.map { String(path[..<$0]) } ?? "."
            let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            guard let real = realpath(folder.isEmpty ? "/" : folder, nil) else { return path }
            defer { free(real) }
            return String(cString: real) + "/" + name
        }
        guard canonical(lockPath) == canonical(cache + "/" + CacheLock.fileName) else { return nil }
        return "the lockfile \(lockPath) would replace the lock file of the cache \(cache), which has the same name; "
            + "give the cache a folder of its own ('cache:' in the manifest, or --cache DIR)"
    }
}
