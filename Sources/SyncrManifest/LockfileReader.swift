#if canImport(Glibc)
import Glibc
#endif

/// A lockfile that cannot be read or is not one, with the position of the problem.
public struct LockfileError: Error, Sendable, CustomStringConvertible {
    /// `FILE:LINE:COL: error: ...` and what to do.
    public var description: String
}

/// Reads lockfiles with the manifest's YAML parser.
public enum LockfileReader {
    /// Reads the lock at `path`; nil when there is no such file.
    /// - Throws: `LockfileError` naming the file, the position and the key when it cannot be
    ///   read or is not a version-1 lock.
    public static func load(path: String) throws(LockfileError) -> Lockfile? {
        switch FileBytes.contents(of: path, limit: maximumSize) {
        case .success(let bytes): return try parse(bytes: bytes, path: path)
        case .failure(let failure) where failure.code == ENOENT: return nil
        case .failure(let failure):
            let hint = failure.code == EFBIG ? "; is it the right file? A lock of 100,000 entries is about 40 MiB" : ""
            throw LockfileError(description: "\(path): error: cannot read the lockfile: \(failure.message)\(hint)")
        }
    }

    /// The largest lockfile read: eight times the largest manifest, since a lock entry (URL,
    /// final URL, validators, SHA-256) is several times the manifest entry it pins.
    public static let maximumSize = 8 * ManifestLoader.maximumSize

    /// Parses lockfile text; `path` names it in messages.
    public static func parse(bytes: [UInt8], path: String) throws(LockfileError) -> Lockfile {
        if let lock = LockfileLines.read(bytes) { return lock }
        let fix = "; run 'syncr lock' to write it afresh"
        func fail(_ mark: YAMLMark?, _ message: String) -> LockfileError {
            LockfileError(description: "\(path)\(mark.map { ":\($0.line):\($0.column)" } ?? ""): error: \(message)\(fix)")
        }
        let root: YAMLNode?
        let parser = YAMLParser(bytes: bytes)
        do {
            root = try parser.parseDocument()
        } catch {
            throw fail(error.mark, error.message)
        }
        // syncr writes no aliases; one that names no anchor is a hand edit, told as the first
        // problem (a lockfile reports one).
        if let broken = parser.brokenAliases.first { throw fail(broken.mark, broken.message) }
        guard let root, case .mapping(let top) = root.content else { throw fail(root?.mark, "expected a mapping with 'version: 1'") }
        // A merge of two locks may keep two `downloads:`: the first alone was read.
        let keys = try values(top, named: { "'\($0)'" }, fail: fail)
        guard let version = keys["version"]?.scalar?.text, version == String(Lockfile.currentVersion) else {
            throw fail(keys["version"]?.mark ?? root.mark,
                       "expected 'version: \(Lockfile.currentVersion)' (this syncr reads lockfile version \(Lockfile.currentVersion))")
        }
        let manifest = keys["manifest"]?.scalar?.text ?? ""
        var entries: [LockedEntry] = []
        switch keys["downloads"]?.content {
        case .sequence(let items)?:
            entries.reserveCapacity(items.count)
            // Destination -> the first record's index and line: two records of one destination
            // (a merge of two locks that both changed it) are refused, naming both, where the
            // second silently stood for both and the first was "not in" the lock.
            var first: [String: (index: Int, line: Int)] = [:]
            for (i, item) in items.enumerated() {
                let locked = try entry(item, path: "downloads[\(i)]", fail: fail)
                if let earlier = first[locked.to] {
                    throw fail(item.mark, "downloads[\(i)].to \(Lockfile.quoted(locked.to)) is locked twice (also "
                        + "downloads[\(earlier.index)], line \(earlier.line)); a merge may have kept both")
                }
                first[locked.to] = (i, item.mark.line)
                entries.append(locked)
            }
        case nil, .scalar?:
            if let node = keys["downloads"], !(node.scalar?.isNull ?? false) { throw fail(node.mark, "'downloads' must be a list") }
        default:
            throw fail(keys["downloads"]?.mark, "'downloads' must be a list")
        }
        return Lockfile(manifest: manifest, entries: entries)
    }

    /// A mapping's values by their keys; a key given twice is refused at the second, naming
    /// the line of the first (`named` says how a key is called in the message).
    private static func values(_ pairs: [YAMLPair], named: (String) -> String,
                               fail: (YAMLMark?, String) -> LockfileError) throws(LockfileError) -> [String: YAMLNode] {
        var values: [String: YAMLNode] = [:]
        var lines: [String: Int] = [:]
        for p in pairs {
            guard let key = p.key.scalar?.text else { continue }
            if let first = lines[key] { throw fail(p.key.mark, "\(named(key)) is given twice (first at line \(first))") }
            values[key] = p.value
            lines[key] = p.key.mark.line
        }
        return values
    }

    private static func entry(_ node: YAMLNode, path: String,
                              fail: (YAMLMark?, String) -> LockfileError) throws(LockfileError) -> LockedEntry {
        guard case .mapping(let pairs) = node.content else { throw fail(node.mark, "\(path): expected a mapping") }
        // The second `to:` won: a record that named two destinations locked the last.
        let fields = try values(pairs, named: { "\(path).\($0)" }, fail: fail)
        func text(_ key: String) throws(LockfileError) -> String? {
            guard let value = fields[key] else { return nil }
            guard let scalar = value.scalar, !scalar.isNull else { throw fail(value.mark, "\(path).\(key): expected a string") }
            return scalar.text
        }
        guard let to = try text("to"), let url = try text("url") else {
            throw fail(node.mark, "\(path): needs 'to' and 'url'")
        }
        var entry = LockedEntry(to: to, url: url, finalURL: try text("final_url"), etag: try text("etag"),
                                lastModified: try text("last_modified"), sha256: try text("sha256")?.lowercased())
        if let size = try text("size") {
            guard let n = Int64(size), n >= 0 else { throw fail(fields["size"]?.mark, "\(path).size: expected a whole number of bytes") }
            entry.size = n
        }
        if let hex = entry.sha256, hex.count != 64 || !hex.allSatisfy(\.isHexDigit) {
            throw fail(fields["sha256"]?.mark, "\(path).sha256: expected 64 hex digits")
        }
        entry.unzip = try text("unzip") == "true"
        return entry
    }
}
