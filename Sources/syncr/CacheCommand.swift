#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// `syncr cache [MANIFEST]` lists the cache; `syncr cache prune` removes what nothing uses.
enum CacheCommand {
    static let help = """
    Usage: syncr cache [--cache DIR] [MANIFEST]
           syncr cache prune [--older-than DURATION] [--dry-run] [--quiet] [--cache DIR] [MANIFEST]

    Lists the cache folder (the manifest's 'cache:', or DIR): each entry's key, kind, state
    (partial with the share cached, complete, recorded when the file was moved to its
    destination and only its record is left, sent for uploads, multipart unfinished for
    s3:// uploads a run left under way, archive not sent for a zip: true upload's archive
    that a killed run left, which the next apply or prune removes, no record for files
    without a readable record),
    size on disk, age and URL as written in the manifest (credentials and token-like query
    values masked).

    'prune' removes the entries no entry of MANIFEST uses (run it with the same environment
    as apply: URLs with ${VAR} name their entries after expansion) and, with --older-than,
    only those unchanged for at least DURATION. With --cache DIR and no MANIFEST, it prunes
    by age alone, but keeps the records of files still in place at their destination (an
    up-to-date file never changes its entry; without its record the next run fetches it
    again). Lock files are never touched. Removing an entry costs at most a download or an
    upload again; no destination file is ever changed. A multipart upload to s3:// that a
    removed entry started and left unfinished is aborted in the store first, so the store
    frees its parts; one that cannot be aborted keeps its entry (prune says how to abort it
    by hand, exits 1, and a later prune tries again).

    Options:
      --cache DIR           Use DIR instead of the manifest's cache folder; without a
                            MANIFEST, no manifest is read.
      --older-than DURATION
                            With prune: only entries unchanged for DURATION (7d, 36h, 90m;
                            0 for any age).
      --dry-run             With prune: show what would be removed, remove nothing.
      --quiet               With prune: print only the summary line.
      -h, --help            Show this help.
    """

    static func options(_ line: ParsedLine) throws(UsageError) -> CacheOptions {
        var options = CacheOptions(cacheDirectory: try line.name("--cache", "a folder"), olderThan: line.value("--older-than"),
                                   dryRun: line.flag("--dry-run"), quiet: line.flag("--quiet"))
        var rest = line.positionals[...]
        if rest.first == "prune" {
            options.action = .prune
            rest.removeFirst()
        }
        if rest.count > 1 {
            throw line.usage("Unexpected argument '\(rest[rest.startIndex + 1])': give one manifest.")
        }
        if let path = rest.first {
            options.manifest = path
            options.manifestGiven = true
        }
        if let text = options.olderThan, AgeText.seconds(text) == nil {
            throw line.usage("'--older-than' takes a duration such as 7d, 36h, 1d12h or 90m, not '\(text)'.")
        }
        if options.action == .list {
            for (given, name) in [(options.olderThan != nil, "--older-than"), (options.dryRun, "--dry-run"),
                                  (options.quiet, "--quiet")] where given {
                throw line.usage("'\(name)' applies to 'cache prune' only.")
            }
        } else if options.cacheDirectory != nil && !options.manifestGiven && options.olderThan == nil {
            throw line.usage("'cache prune --cache DIR' needs a MANIFEST (to keep what it uses) "
                + "or --older-than DURATION (to keep what changed recently).")
        }
        return options
    }

    static func run(_ options: CacheOptions) async -> Int32 {
        if let code = CacheOption.refuse(options.cacheDirectory) { return code }
        var manifest: Manifest?
        if options.manifestGiven || options.cacheDirectory == nil {
            // Listing and pruning send no request: a header's secret need not be set here (a
            // cleanup job rarely has the download job's secrets). URLs still need theirs, which
            // name the entries.
            guard let loaded = loadManifest(options.manifest, headersUnexpanded: true, usesCache: options.cacheDirectory == nil) else { return ExitCode.invalidManifest }
            manifest = loaded
        }
        guard let directory = options.cacheDirectory ?? manifest?.cacheDirectory else { return ExitCode.usage }
        // A running apply may be writing any entry: prune lists and removes only while holding
        // the same lock (a dry run changes nothing and takes none).
        var lock: CacheLock?
        var st = stat()
        let exists = stat(directory, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
        if options.action == .prune && !options.dryRun && exists {
            switch await CacheLocking.acquire(directory: directory, timeoutMilliseconds: 0, quiet: options.quiet) {
            case .locked(let held): lock = held
            case .failed(let code): return code
            }
        }
        defer { lock?.release() }
        // Upload archives killed runs left (half built, or built and not sent) are nobody's,
        // whatever entry they are of: with the lock held, no run is zipping or sending now.
        if lock != nil, Cache(directory: directory).removeLeftoverArchives() > 0, !options.quiet {
            Output.err("syncr: removed the upload archives that killed runs left")
        }
        // Not an error (a fresh runner has no cache yet), but said: a mistyped folder reported
        // "empty" or "removed 0" as if it were the cache.
        // Only when nothing is there: a file in its place fails the listing below, which says so.
        if !exists, !options.quiet, lstat(directory, &st) != 0, errno == ENOENT {
            Output.err("syncr: note: there is no cache folder at \(directory) (nothing has been cached there)")
        }
        let entries: [CacheEntry]
        do {
            // Only a prune without a manifest asks whether destinations are still in place.
            entries = try CacheInventory.entries(in: directory, placements: options.action == .prune && manifest == nil)
        } catch {
            Output.err("syncr: error: \(error.description)")
            return ExitCode.failures
        }
        let now = Int64(time(nil))
        switch options.action {
        case .list:
            list(entries, directory: directory, now: now)
            return ExitCode.success
        case .prune:
            let rule = CachePrune(referenced: manifest.map(CachePrune.keys(referencedBy:)),
                                  olderThan: options.olderThan.flatMap(AgeText.seconds))
            return prune(entries, directory: directory, rule: rule, manifestName: manifest == nil ? nil : options.manifest,
                         dryRun: options.dryRun, quiet: options.quiet, now: now)
        }
    }

    static func list(_ entries: [CacheEntry], directory: String, now: Int64) {
        guard !entries.isEmpty else {
            Output.out("Cache \(directory): empty.")
            return
        }
        var rows = [["KEY", "KIND", "STATE", "ON DISK", "AGE", "URL"]]
        for e in entries {
            rows.append([e.key, e.kind.rawValue, state(e), ByteSize.format(e.bytesOnDisk), age(e.age(now: now)), what(e)])
        }
        for line in table(rows) { Output.out(line) }
        let partial = entries.filter { if case .partial = $0.status { true } else { false } }.count
        let total = entries.reduce(Int64(0)) { $0 + $1.bytesOnDisk }
        Output.out("Cache \(directory): \(entries.count) entr\(entries.count == 1 ? "y" : "ies")"
            + (partial > 0 ? " (\(partial) partial)" : "") + ", \(ByteSize.format(total)) on disk.")
    }

    static func prune(_ entries: [CacheEntry], directory: String, rule: CachePrune, manifestName: String?,
                      dryRun: Bool, quiet: Bool, now: Int64) -> Int32 {
        var removed = 0
        var freed: Int64 = 0
        var failed = 0
        let cache = Cache(directory: directory)
        for e in entries where rule.selects(e, now: now) {
            var reasons: [String] = []
            if let manifestName { reasons.append("not used by \(manifestName)") }
            if rule.olderThan != nil { reasons.append("unchanged for \(age(e.age(now: now)))") }
            if !dryRun {
                do {
                    try CachePrune.remove(e, from: cache)
                } catch {
                    Output.err("syncr: error: \(error.description)")
                    failed += 1
                    continue
                }
            }
            removed += 1
            freed += e.bytesOnDisk
            if !quiet {
                Output.out("\(dryRun ? "would remove" : "removed") \(e.key) \(state(e)), \(ByteSize.format(e.bytesOnDisk)): "
                    + "\(what(e)) (\(reasons.joined(separator: ", ")))")
            }
        }
        if !dryRun && removed > 0 {
            do {
                try cache.finishRecords()
            } catch {
                // The entries are gone; only their records may come back after a power cut.
                Output.err("syncr: warning: \(error.description)")
            }
        }
        let kept = entries.count - removed - failed
        let noun = removed == 1 ? "entry" : "entries"
        Output.out(dryRun
            ? "syncr: would remove \(removed) cache \(noun) from \(directory), freeing \(ByteSize.format(freed)); \(kept) kept."
            : "syncr: removed \(removed) cache \(noun) from \(directory), \(ByteSize.format(freed)) freed; \(kept) kept."
              + (failed > 0 ? " \(failed) could not be removed." : ""))
        return failed == 0 ? ExitCode.success : ExitCode.failures
    }

    static func state(_ e: CacheEntry) -> String {
        switch e.status {
        case .partial(let cached, let size):
            guard let size, size > 0 else { return "partial" }
            return "partial \(min(99, cached * 100 / size))%"
        case .complete: return "complete"
        case .recorded: return "recorded"
        case .sent(let files): return "sent \(files) file\(files == 1 ? "" : "s")"
        case .unfinishedMultipart(let uploads, let parts):
            let what = uploads == 1 ? "multipart unfinished" : "\(uploads) multipart uploads unfinished"
            return "\(what), \(parts) part\(parts == 1 ? "" : "s") sent"
        case .unsentArchive: return "archive not sent"
        case .noRecord: return "no record"
        }
    }

    static func what(_ e: CacheEntry) -> String {
        switch e.kind {
        // An archive not sent has no record to name its source and URL.
        case .upload: return e.source.map { "\($0) -> \(e.url ?? "?")" } ?? e.url ?? "-"
        case .download: return e.url ?? "?"
        case .unknown: return "-"
        }
    }

    /// `45s`, `12m`, `3h`, `5d`: the largest whole unit.
    static func age(_ seconds: Int64) -> String {
        switch seconds {
        case ..<60: "\(seconds)s"
        case ..<3600: "\(seconds / 60)m"
        case ..<86_400: "\(seconds / 3600)h"
        default: "\(seconds / 86_400)d"
        }
    }

    /// Left-aligned columns two spaces apart; the last column is not padded.
    static func table(_ rows: [[String]]) -> [String] {
        guard let columns = rows.first?.count else { return [] }
        let widths = (0..<columns).map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in
                c == columns - 1 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count)
            }.joined(separator: "  ")
        }
    }
}
