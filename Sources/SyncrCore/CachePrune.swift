#if canImport(Glibc)
import Glibc
#endif
import SyncrManifest

/// Chooses and removes cache entries nothing needs any more.
///
/// An entry is pruned when it meets every criterion given: no entry of `manifest` refers to it
/// (when a manifest is given), and it has not changed for `olderThan` seconds (when given).
/// Without a manifest, a record whose destination file is still in place as recorded is kept:
/// a file that is up to date never changes its entry, so its age says nothing about its use, and
/// removing the record would make the next run download the file again. Lock files are never
/// touched.
///
/// The caller holds the cache lock (`CacheLock`) while it lists and removes, so no run is
/// writing an entry meanwhile.
public struct CachePrune: Sendable {
    /// The cache keys the manifest's entries use (downloads by URL, uploads by method, source and
    /// URL), nil to ignore references.
    public var referenced: Set<String>?
    /// Minimum age in seconds, nil for any age.
    public var olderThan: Int64?

    /// Creates a prune from its two criteria; nil leaves a criterion out.
    public init(referenced: Set<String>?, olderThan: Int64?) {
        self.referenced = referenced
        self.olderThan = olderThan
    }

    /// Everything the manifest refers to (with its variables expanded as the run would): cache
    /// keys, and the URLs of `s3://` prefix downloads, whose objects (known only by listing the
    /// bucket) keep every entry recorded under them.
    public static func keys(referencedBy manifest: Manifest) -> Set<String> {
        var keys = Set(manifest.downloads.map { Cache.key(for: $0) })
        keys.formUnion(manifest.uploads.map { Cache.uploadKey($0) })
        keys.formUnion(manifest.downloads.filter { $0.s3?.isPrefix == true }.map(\.url.expanded))
        return keys
    }

    /// Whether `entry` is an object under an `s3://` prefix that `referenced` names.
    func underReferencedPrefix(_ entry: CacheEntry) -> Bool {
        guard let referenced, let url = entry.url, url.hasPrefix("s3://") else { return false }
        return referenced.contains { $0.hasPrefix("s3://") && url.hasPrefix($0) }
    }

    /// Whether `entry` should go.
    public func selects(_ entry: CacheEntry, now: Int64) -> Bool {
        if let referenced, referenced.contains(entry.key) || underReferencedPrefix(entry) { return false }
        if let olderThan, entry.age(now: now) < olderThan { return false }
        if referenced == nil, entry.destinationInPlace { return false }
        return referenced != nil || olderThan != nil
    }

    /// Removes the entry's files: the record files first (so no record ever vouches for missing
    /// data), then everything else, then the journal's record. A multipart upload the entry started is aborted first, so the store
    /// frees (and stops billing) its parts; one that cannot be leaves the entry whole, for a
    /// later prune to try again. Call `Cache.finishRecords()` once the pruning is done.
    ///
    /// - Throws: `CachePruneError`: the upload that could not be aborted, or the first file that
    ///   could not be removed (one already gone is fine).
    public static func remove(_ entry: CacheEntry, from cache: Cache) throws(CachePruneError) {
        let directory = cache.directory
        let records = entry.files.filter { $0.hasSuffix(".state") || $0.hasSuffix(".upload") }
        let rest = entry.files.filter { !records.contains($0) }
        for name in entry.files where name.hasSuffix(".multipart") {
            let path = directory + "/" + name
            do {
                try S3AbandonedUploads.abort(recordAt: path)
            } catch {
                throw .uploadNotAborted(record: path, bucket: error.bucket, key: error.key, uploadID: error.uploadID,
                                        endpoint: error.endpoint,
                                        reason: error.reason)
            }
        }
        for name in records + rest {
            let path = directory + "/" + name
            if unlink(path) != 0 && errno != ENOENT {
                throw .file(FileError(path: path, operation: "remove", errno: errno))
            }
        }
        // Last, and without a flush of its own: data is only removed here, never replaced, and
        // a journal record of data that is gone reads as such (the cache file's size is checked
        // before it is used). So a full disk, which may refuse the tombstone, still frees the
        // data.
        do {
            try cache.journal.forget(entry.key, durable: false)
        } catch {
            throw .file(error)
        }
    }

    /// `remove(_:from:)` for a cache at `directory`: one entry; for many, make one `Cache` and
    /// pass it, so that its record journal is read once.
    public static func remove(_ entry: CacheEntry, from directory: String) throws(CachePruneError) {
        let cache = Cache(directory: directory)
        try remove(entry, from: cache)
        do { try cache.finishRecords() } catch { throw .file(error) }
    }
}

/// Why `CachePrune.remove` left an entry (or part of it) in place.
public enum CachePruneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file of the entry could not be removed.
    case file(FileError)
    /// The multipart upload the entry started could not be aborted (`reason`), so the entry was
    /// kept: removing its record would forget the upload, whose parts the store keeps and bills.
    /// `endpoint`: the store's, as recorded (nil: AWS).
    case uploadNotAborted(record: String, bucket: String, key: String, uploadID: String, endpoint: String?, reason: String)

    /// The message `syncr cache prune` prints: what was kept, why, and what to do about it.
    public var description: String {
        switch self {
        case .file(let error):
            return error.description
        case .uploadNotAborted(let record, let bucket, let key, let uploadID, let endpoint, let reason):
            // The store's own endpoint: without it, the command goes to AWS. Quoted for a shell:
            // a key may hold spaces, quotes or `$`.
            let at = endpoint.map { ["--endpoint-url", $0] } ?? []
            let command = ShellWord.command(["aws"] + at + ["s3api", "abort-multipart-upload", "--bucket", bucket,
                                                            "--key", key, "--upload-id", uploadID])
            return "could not abort the multipart upload syncr left at s3://\(bucket)/\(key) (\(reason)); "
                + "the store keeps (and bills) its parts until it is aborted, so the entry is kept. Run "
                + "'syncr cache prune' again with the store's credentials, or abort it by hand and remove "
                + "\(record): \(command)"
        }
    }
}

/// Durations for `--older-than`: the manifest's units (`h`, `m`, `s`, `ms`) and days (`d`) in
/// front, so `7d`, `36h`, `1d12h` and `90m` all read, and a bare `0`.
public enum AgeText {
    /// Seconds, or nil when the text is not a duration.
    public static func seconds(_ text: String) -> Int64? {
        // Zero is zero in every unit, as with --lock-timeout 0; any other bare number is refused,
        // since `7` could mean 7 days as well as 7 seconds.
        if text == "0" { return 0 }
        var rest = Substring(text)
        var daySeconds: Int64 = 0
        if let d = rest.firstIndex(of: "d") {
            // Whole or decimal, as hours and minutes may be (`1.5d` as `1.5h`): digits and at
            // most one point between them.
            let number = rest[..<d]
            guard let first = number.first, first.isASCII, first.isNumber, number.last?.isNumber == true,
                  number.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }),
                  number.filter({ $0 == "." }).count <= 1, let n = Double(number), n < 1_000_000 else { return nil }
            daySeconds = Int64(n * 86_400)
            rest = rest[rest.index(after: d)...]
            if rest.isEmpty { return daySeconds }
        }
        guard let ms = DurationText.parse(String(rest)) else { return nil }
        return daySeconds + Int64(ms / 1000)
    }
}
