#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrManifest

/// What one cache entry holds, read from the cache folder without changing anything.
///
/// An entry is every file whose name starts with the same 32-hex-digit key, and its line in
/// the record journal: `<key>.data` and `<key>.state` (or the journal's line) for a download,
/// `<key>.upload` for an upload (and `<key>.zip`, its archive, while a run sends it or after a
/// killed run), and any `<key>.*.tmp` or `.<key>.zip.*.tmp` left by an interrupted atomic write
/// or zip.
public struct CacheEntry: Sendable, Equatable {
    /// What kind of record the entry carries.
    public enum Kind: String, Sendable {
        /// A download's record (`<key>.state`, or its line in the records journal) or data.
        case download
        /// An upload's record (`<key>.upload`), multipart uploads or archive.
        case upload
        /// Files with the entry's key but no readable record (data that will be fetched again).
        case unknown
    }

    /// How far a download entry got.
    public enum Status: Sendable, Equatable {
        /// Some bytes are cached; `of` is the resource's size when known.
        case partial(cached: Int64, of: Int64?)
        /// The whole resource is in the cache (an archive kept for `unzip:`, or not yet moved).
        case complete
        /// The file was moved to its destination; only its record is left.
        case recorded
        /// An upload record: what was last sent.
        case sent(files: Int)
        /// Multipart uploads started and not completed (a killed run's, or ones kept for prune
        /// to abort): `uploads` of them (a folder upload has one per large file), with `parts`
        /// recorded as in the store over all of them.
        case unfinishedMultipart(uploads: Int, parts: Int)
        /// A `zip: true` upload's archive and no record of sending it: built by a run that was
        /// killed before the upload was recorded (or, while a run is under way, being sent).
        /// The next `apply` with a `zip: true` entry, or `cache prune`, removes it.
        case unsentArchive
        /// No readable record.
        case noRecord
    }

    /// The lowercase hex key (`Cache.key(for:)` for downloads).
    public var key: String
    /// Whether the entry records a download, an upload, or nothing readable.
    public var kind: Kind
    /// How far the entry got, as its record says.
    public var status: Status
    /// The file names (not paths) in the cache folder that belong to the entry.
    public var files: [String]
    /// Bytes the entry's files occupy on disk (allocated blocks, so sparse data counts as written).
    public var bytesOnDisk: Int64
    /// The URL as the record has it (as written in the manifest; credentials and tokens masked).
    public var url: String?
    /// For an upload: the source as written.
    public var source: String?
    /// Unix seconds of the last change to any of the entry's files.
    public var modified: Int64
    /// A recorded download whose destination file is still exactly as the record describes: the
    /// record is what lets `plan` skip it, and losing it costs a full download.
    public var destinationInPlace = false

    /// Seconds since the entry last changed, at `now`.
    public func age(now: Int64) -> Int64 { max(0, now - modified) }
}

/// Reads a cache folder's entries.
public enum CacheInventory {
    /// Files with this suffix are locks (of a run that may be in progress): never part of an entry,
    /// never removed by pruning.
    public static let lockSuffix = ".lock"

    /// The entries of the cache at `directory`, sorted by URL then key; an empty list when the
    /// folder does not exist.
    ///
    /// - Parameter placements: whether to find out `destinationInPlace` (a `stat` of each file
    ///   destination, a walk of each unpacked folder): only pruning by age alone reads it.
    /// - Throws: `FileError` when the folder exists but cannot be listed.
    public static func entries(in directory: String, placements: Bool = true) throws(FileError) -> [CacheEntry] {
        guard let dir = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw FileError(path: directory, operation: "list the cache folder", errno: errno)
        }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = directoryEntryName(entry)
            names.append(name)
        }
        closedir(dir)

        var byKey: [String: [String]] = [:]
        for name in names {
            guard let key = key(ofFileNamed: name) else { continue }
            byKey[key, default: []].append(name)
        }
        let cache = Cache(directory: directory)
        // A complete download's record is a line of the journal, often with no file beside it.
        let recorded = Set(cache.journal.keys())
        for key in recorded where byKey[key] == nil { byKey[key] = [] }
        var result: [CacheEntry] = []
        for (key, files) in byKey {
            var onDisk: Int64 = 0
            var modified: Int64 = 0
            var regular: [String] = []
            for file in files.sorted() {
                var st = stat()
                guard lstat(directory + "/" + file, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
                regular.append(file)
                onDisk += Int64(st.st_blocks) * 512
                modified = max(modified, Int64(st.st_mtim.tv_sec))
            }
            guard !regular.isEmpty || recorded.contains(key) else { continue }
            var entry = CacheEntry(key: key, kind: .unknown, status: .noRecord, files: regular,
                                   bytesOnDisk: onDisk, url: nil, source: nil, modified: modified)
            if let state = cache.loadState(key) {
                // A journal line has no time of its own: the record says when it was written.
                if recorded.contains(key) { entry.modified = max(modified, state.updated) }
                entry.kind = .download
                entry.url = maskURL(state.url)
                let hasData = regular.contains(key + ".data")
                if state.complete {
                    entry.status = hasData ? .complete : .recorded
                    if placements, let destination = state.destination {
                        if let recorded = state.destinationFingerprint {
                            entry.destinationInPlace = FS.fingerprint(destination) == recorded
                        } else if let tree = state.destinationTree {
                            // An unpacked folder: its shape, as the plan compares it.
                            entry.destinationInPlace = FolderReplace.fingerprint(destination) == tree
                        }
                    }
                } else {
                    entry.status = .partial(cached: hasData ? state.cachedBytes : 0, of: state.size)
                }
            } else if let record = cache.loadUploadRecord(key) {
                entry.kind = .upload
                entry.url = maskURL(record.url)
                entry.source = record.from
                entry.status = .sent(files: record.files.count)
            } else if regular.contains(where: { isUploadArchive($0) || isHalfBuiltArchive($0) }) {
                // Named by what it is: listed as "no record", it read as a stray file of
                // unknown origin.
                entry.kind = .upload
                entry.status = .unsentArchive
            }
            // Uploads under way say so, over what an earlier upload sent: a run resumes them,
            // and pruning the entry aborts them in the store. A folder's entry has one per file
            // large enough for a multipart upload.
            var objects: [String] = []
            var parts = 0
            for name in regular where name.hasSuffix(".multipart") {
                guard let bytes = FS.readAll(directory + "/" + name, limit: Cache.listRecordLimit),
                      let multipart = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)) else { continue }
                objects.append("s3://\(multipart.bucket)/\(multipart.key)")
                parts += multipart.parts.count
            }
            if !objects.isEmpty {
                entry.kind = .upload
                entry.status = .unfinishedMultipart(uploads: objects.count, parts: parts)
                if entry.url == nil { entry.url = Self.folder(of: objects) }
            }
            result.append(entry)
        }
        return result.sorted { ($0.url ?? "~", $0.key) < ($1.url ?? "~", $1.key) }
    }

    /// The key a cache file belongs to: its name up to the first dot, when that is 32 hex digits
    /// (after the leading dot of a hidden `.<key>.….tmp`, an archive being built); nil for locks
    /// and for anything else (which pruning leaves alone).
    static func key(ofFileNamed name: String) -> String? {
        var name = Substring(name)
        if name.hasPrefix(".") && name.hasSuffix(".tmp") { name = name.dropFirst() }
        guard !name.hasSuffix(lockSuffix), let dot = name.firstIndex(of: ".") else { return nil }
        let key = name[..<dot]
        guard key.count == 32, key.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return String(key)
    }

    /// Whether `name` is an upload's archive, built whole (`<key>.zip`): one is there only
    /// while its run sends it, so outside a run it is what a killed run left.
    static func isUploadArchive(_ name: String) -> Bool {
        name.utf8.count == 36 && name.hasSuffix(".zip") && key(ofFileNamed: name) != nil
    }

    /// Whether `name` is an upload's archive half built (`.<key>.zip.<random>.tmp`).
    static func isHalfBuiltArchive(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".zip.") && key(ofFileNamed: name) != nil
    }

    /// The one object's URL, or the folder (up to a `/`) that holds all of several.
    static func folder(of objects: [String]) -> String {
        guard var common = objects.first, objects.count > 1 else { return objects.first ?? "" }
        for object in objects.dropFirst() {
            common = String(zip(common, object).prefix { $0 == $1 }.map(\.0))
        }
        return String(common[...(common.lastIndex(of: "/") ?? common.startIndex)])
    }

    /// A recorded URL fit to print: user information and the values of query parameters that
    /// look like credentials masked, as everywhere (`URLCredentials.masked`). A record holds
    /// the URL as written in the manifest, so `${VAR}` references stay as they are.
    public static func maskURL(_ url: String) -> String {
        Redactor(secrets: []).scrub(url)
    }
}
