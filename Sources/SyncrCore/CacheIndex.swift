#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// Which entries had a record file (`<key>.state`, an unfinished download's) or data
/// (`<key>.data`) in the cache folder when a plan or apply began, read in one listing of the
/// folder. Complete records are in the journal, which is read whole (`RecordJournal`).
///
/// A run asks about every entry, and in a fresh cache or a fresh folder of downloads almost none
/// has anything cached: one `readdir` replaces an `open` and a `stat` of absent names per entry.
/// Only the absence is trusted, and only for the first entry that asks about a key: a second
/// asking about the same key may find what the first one wrote, so it asks the disk.
final class CacheIndex: Sendable {
    private struct Found: OptionSet, Sendable {
        let rawValue: UInt8
        static let record = Found(rawValue: 1)
        static let data = Found(rawValue: 2)
        /// Asked about once already in this run.
        static let asked = Found(rawValue: 4)
    }

    /// Nil when the folder could not be listed (then every answer is "ask the disk").
    private let found: Locked<[CacheKey: Found]>?
    /// Whether the listing showed any `.data` file (true when the folder could not be listed):
    /// without one, no entry has a partial download to ask about.
    let mayHoldData: Bool
    /// Whether the listing showed a name an upload's archive may have (`<key>.zip`, or a
    /// hidden `.tmp`; true when the folder could not be listed): without one, apply need not
    /// list the folder again for archives killed runs left (`Cache.removeLeftoverArchives`).
    let mayHoldArchives: Bool

    /// Lists `directory` now. A folder that does not exist holds nothing.
    init(directory: String) {
        guard let dir = opendir(directory) else {
            found = errno == ENOENT ? Locked([:]) : nil
            mayHoldData = found == nil
            mayHoldArchives = found == nil
            return
        }
        defer { closedir(dir) }
        var map: [CacheKey: Found] = [:]
        var data = false
        var archives = false
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            let name = UnsafeRawPointer(entry) + offset
            let length = strlen(name.assumingMemoryBound(to: CChar.self))
            // An archive's name (checked loosely: a false yes costs one more listing).
            if !archives, length > 4, memcmp(name + length - 4, ".zip", 4) == 0 || memcmp(name + length - 4, ".tmp", 4) == 0 {
                archives = true
            }
            // `<32 hex>.state` or `<32 hex>.data`; every other name is not an entry's.
            guard length == 38 || length == 37 else { continue }
            let bytes = UnsafeRawBufferPointer(start: name, count: length)
            let suffix = bytes[32...]
            let kind: Found
            if suffix.elementsEqual(".state".utf8) {
                kind = .record
            } else if suffix.elementsEqual(".data".utf8) {
                kind = .data
                data = true
            } else {
                continue
            }
            guard let key = CacheKey(hex: bytes[..<32]) else { continue }
            map[key, default: []].insert(kind)
        }
        found = Locked(map)
        mayHoldData = data
        mayHoldArchives = archives
    }

    /// What the disk may hold for `key`: false only where the listing showed nothing and no
    /// entry of this run asked before.
    func mayHave(_ key: String) -> (record: Bool, data: Bool) {
        guard let found, let k = CacheKey(hex: Array(key.utf8)) else { return (true, true) }
        let was = found.withLock { map -> Found in
            let was = map[k] ?? []
            map[k] = was.union(.asked)
            return was
        }
        if was.contains(.asked) { return (true, true) }
        return (was.contains(.record), was.contains(.data))
    }
}
