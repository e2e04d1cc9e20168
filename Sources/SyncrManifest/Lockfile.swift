/// A lockfile (`syncr.lock` beside `syncr.yml`): what each download was when `syncr lock` ran,
/// so that `--locked` runs fetch exactly those bytes or fail.
public struct Lockfile: Sendable, Equatable {
    /// The format's version; this syncr reads and writes 1.
    public static let currentVersion = 1

    /// How a lockfile begins, so that nothing else mistakes one for a file of its own.
    public static let header = "# Written by 'syncr lock'"

    /// The file name of the manifest the lock was written for (`syncr.yml`), without its folder.
    /// The lock lives beside its manifest, so this is also the manifest's path relative to the
    /// lock, true wherever the folder is moved or checked out. Empty when the lock says none (a
    /// lock written by hand).
    public var manifest: String
    /// One record per download entry, sorted by destination.
    public private(set) var entries: [LockedEntry]
    private var byDestination: [String: Int]

    /// A lock of `entries`, which it sorts by destination.
    public init(manifest: String, entries: [LockedEntry]) {
        self.manifest = manifest
        self.entries = entries.sorted { $0.to < $1.to }
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        for (i, e) in self.entries.enumerated() { index[e.to] = i }
        byDestination = index
    }

    /// The record of the download whose `to` is `to` (as written in the manifest).
    public func entry(to: String) -> LockedEntry? {
        byDestination[to].map { entries[$0] }
    }

    /// What a lock of the manifest at `manifestPath` records as `manifest:`: its file name
    /// (`ci/data.yml` -> `data.yml`).
    public static func manifestName(forManifest manifestPath: String) -> String {
        manifestPath.lastIndex(of: "/").map { String(manifestPath[manifestPath.index(after: $0)...]) } ?? manifestPath
    }

    /// Where the lock of the manifest at `manifestPath` lives: beside it, named after it
    /// (`syncr.yml` -> `syncr.lock`, `data.yaml` -> `data.lock`, `list` -> `list.lock`).
    /// `data.yml` and `data.yaml` share `data.lock`: the lock's `manifest:` tells whose it is.
    public static func path(forManifest manifestPath: String) -> String {
        let slash = manifestPath.lastIndex(of: "/")
        let name = slash.map { manifestPath[manifestPath.index(after: $0)...] } ?? manifestPath[...]
        for ext in [".yml", ".yaml"] where name.hasSuffix(ext) && name.count > ext.count {
            return String(manifestPath.dropLast(ext.count)) + ".lock"
        }
        return manifestPath + ".lock"
    }
}

/// What one download was when it was locked.
public struct LockedEntry: Sendable, Equatable {
    /// The destination as written in the manifest: the key that ties the record to its entry.
    public var to: String
    /// The URL as written (`${VAR}` references unexpanded, so never a secret).
    public var url: String
    /// The URL after redirects, with credentials and token-like query values masked.
    public var finalURL: String?
    /// The size in bytes, when the server gave one.
    public var size: Int64?
    /// The strong entity tag, as the header carries it (`"abc"`); nil when there was none or
    /// it was weak (a weak tag does not pin bytes).
    public var etag: String?
    /// `Last-Modified`, as the server sent it.
    public var lastModified: String?
    /// The SHA-256 of the bytes, lowercase hex, when known (pinned in the manifest, recorded by
    /// a verified download, or `syncr lock --hash`).
    public var sha256: String?
    /// The entry unpacks an archive (`unzip: true`): the record pins the archive.
    public var unzip: Bool

    /// Creates a record from its parts.
    public init(to: String, url: String, finalURL: String? = nil, size: Int64? = nil, etag: String? = nil,
                lastModified: String? = nil, sha256: String? = nil, unzip: Bool = false) {
        self.to = to
        self.url = url
        self.finalURL = finalURL
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.sha256 = sha256
        self.unzip = unzip
    }
}

extension Lockfile {
    /// The lock as YAML: the same lock always gives the same bytes (no dates, fixed key order,
    /// every string double-quoted), so a lock run against unchanged servers changes nothing.
    public var yaml: String {
        var out = Self.header + " from \(manifest.replacingNewlines). Check it in beside the manifest:\n"
        out += "# 'syncr apply --locked' then fetches exactly these files or fails. Run 'syncr lock' again\n"
        out += "# to accept new versions.\n"
        out += "version: \(Self.currentVersion)\n"
        out += "manifest: \(Self.quoted(manifest))\n"
        out += entries.isEmpty ? "downloads: []\n" : "downloads:\n"
        for e in entries {
            out += "  - to: \(Self.quoted(e.to))\n"
            out += "    url: \(Self.quoted(e.url))\n"
            if let v = e.finalURL { out += "    final_url: \(Self.quoted(v))\n" }
            if let v = e.size { out += "    size: \(v)\n" }
            if let v = e.etag { out += "    etag: \(Self.quoted(v))\n" }
            if let v = e.lastModified { out += "    last_modified: \(Self.quoted(v))\n" }
            if let v = e.sha256 { out += "    sha256: \(Self.quoted(v))\n" }
            if e.unzip { out += "    unzip: true\n" }
        }
        return out
    }

    /// A YAML double-quoted scalar: `\` and `"` escaped, control characters as `\uXXXX`.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

private extension String {
    var replacingNewlines: String {
        String(unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : Character($0) })
    }
}
