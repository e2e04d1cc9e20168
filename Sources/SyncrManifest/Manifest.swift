/// A parsed, validated syncr manifest (version 1).
///
/// Every value keeps the position it was written at, so that later stages (the planner, the
/// executor) can still point at the manifest line an entry came from.
public struct Manifest: Sendable {
    /// The manifest file as given on the command line (used in messages).
    public var path: String
    /// Absolute path of the folder that holds the manifest; relative paths resolve against it.
    public var directory: String
    /// The manifest's `version` (always 1 for now).
    public var version: Int
    /// The cache folder as written (`cache:`), or the default `.syncr/cache`.
    public var cache: String
    /// `cache` resolved against `directory` (or absolute as written).
    public var cacheDirectory: String
    /// The `defaults:` block with built-in defaults filled in.
    public var defaults: Settings
    /// The `downloads:` entries, in manifest order, with defaults merged in.
    public var downloads: [Download]
    /// The `uploads:` entries, in manifest order, with defaults merged in.
    public var uploads: [Upload]

    /// Creates a manifest.
    public init(path: String, directory: String, version: Int, cache: String, cacheDirectory: String,
                defaults: Settings, downloads: [Download], uploads: [Upload] = []) {
        self.path = path
        self.directory = directory
        self.version = version
        self.cache = cache
        self.cacheDirectory = cacheDirectory
        self.defaults = defaults
        self.downloads = downloads
        self.uploads = uploads
    }

    /// Every secret value the manifest expanded from the environment, for output scrubbing:
    /// from header values, download and upload URLs, and upload form field values; and the
    /// passwords and tokens written in URLs (`https://user:password@host/`, `?token=...`).
    /// Longest first, so that scrubbing a secret never leaves part of a longer one.
    public var secrets: [String] {
        var all: [String] = defaults.headers.flatMap { $0.value.secrets + $0.maskedValues }
        for d in downloads {
            all += d.url.secrets
            all += Self.literalCredentials(d.url)
            all += d.settings.headers.flatMap { $0.value.secrets + $0.maskedValues }
        }
        for u in uploads {
            all += u.url.secrets
            all += Self.literalCredentials(u.url)
            all += u.settings.headers.flatMap { $0.value.secrets + $0.maskedValues }
            all += u.fields.flatMap { $0.value.secrets }
        }
        return Array(Set(all.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }
}

extension Manifest {
    /// The passwords and query-string tokens in a URL that no `${...}` expansion already
    /// covers (those are secrets as a whole): the ones written out in the manifest.
    static func literalCredentials(_ url: Template) -> [String] {
        (URLCredentials.secrets(in: url.expanded) + QueryCredentials.secrets(in: url.expanded)).filter { password in
            !url.secrets.contains { $0.contains(password) }
        }
    }
}

/// A position in a source file, 1-based.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }
    public var description: String { "\(file):\(line):\(column)" }
}

/// Settings that `defaults:` sets for every entry and each entry may override.
public struct Settings: Sendable, Equatable {
    /// Files in flight at once (`jobs`, run-wide; only meaningful in `defaults`).
    public var jobs: Int
    /// Retries after the first attempt (`retries`).
    public var retries: Int
    /// Connect timeout, and how long a transfer may make no progress, in milliseconds (`timeout`).
    public var timeoutMilliseconds: Int
    /// Whether the manifest wrote `timeout` (under `defaults:` or on the entry), so that a
    /// message about it says where it came from: the manifest, the default, or neither (a
    /// program that set `timeoutMilliseconds` itself).
    public var timeoutWritten = false
    /// Request headers, in order; entry headers replace default headers of the same name
    /// (case-insensitive).
    public var headers: [Header]
    /// Parallel Range requests for one large file (`connections`).
    public var connections: Int
    /// Files at least this large are split across `connections` (`min_split`, bytes).
    public var minSplit: Int64
    /// A connection slower than this many bytes per second for `timeout` is dropped and its
    /// range retried (`low_speed`).
    public var lowSpeed: Int64
    /// At most this many connections to one host at once, over all files and segments
    /// (`max_connections_per_host`, run-wide).
    public var maxConnectionsPerHost: Int
    /// Whether finished files, cache records and folders are flushed to disk (`fsync`, run-wide).
    /// Off, files are still never half-written if syncr is killed, but a power loss may lose
    /// or tear what the last runs wrote: for ephemeral CI runners that a power cut takes whole.
    public var fsync = true
    /// Trust, redirect and credential settings (`ca_cert`, `insecure`, `trusted_redirects`,
    /// `max_redirects`, `allow_insecure_redirects`, `netrc`).
    public var network = NetworkSettings()
    /// Where `s3://` URLs' stores are and how requests to them are signed (`s3:`).
    public var s3 = S3Settings()

    public static let builtIn = Settings(jobs: 4, retries: 5, timeoutMilliseconds: 30_000, headers: [],
                                         connections: 8, minSplit: 16 << 20, lowSpeed: 1024,
                                         maxConnectionsPerHost: 16)

    public init(jobs: Int, retries: Int, timeoutMilliseconds: Int, headers: [Header],
                connections: Int = 8, minSplit: Int64 = 16 << 20, lowSpeed: Int64 = 1024,
                maxConnectionsPerHost: Int = 16) {
        self.jobs = jobs
        self.retries = retries
        self.timeoutMilliseconds = timeoutMilliseconds
        self.headers = headers
        self.connections = connections
        self.minSplit = minSplit
        self.lowSpeed = lowSpeed
        self.maxConnectionsPerHost = maxConnectionsPerHost
    }
}

/// One HTTP request header from the manifest. Printed (`description`, `dump`) with a
/// credential's value masked.
public struct Header: Sendable, Equatable {
    /// The header's name as written.
    public var name: String
    /// Its value: written, and expanded from the environment.
    public var value: Template
    /// Creates a header.
    public init(name: String, value: Template) {
        self.name = name
        self.value = value
    }

    /// Whether the header's name says it carries a credential, whatever its value: such a
    /// header goes only to the origin the manifest names. The name's parts (split at `-` and
    /// `_`) are looked at, so `X-Author` is not one: `Authorization`, `Cookie`, and any with a
    /// part `auth`, `token`, `secret`, `password`, `credential(s)`, `signature`, `session` or
    /// `apikey`, or ending in `key` (`X-Api-Key`, `Private-Token`, `X-Auth-User`,
    /// `Ocp-Apim-Subscription-Key`).
    public var carriesCredentials: Bool {
        let parts = name.lowercased().split { $0 == "-" || $0 == "_" }
        let words: Set<Substring> = ["authorization", "authentication", "auth", "cookie", "token", "secret", "password",
                                     "passwd", "credential", "credentials", "signature", "session", "apikey"]
        return parts.last == "key" || parts.contains { words.contains($0) }
    }

    /// The parts of a credential header's value written out in the manifest to mask: what
    /// follows an authentication scheme (`Bearer xyz`: `xyz`), else the whole value; for a
    /// cookie, each `name=value` pair. Only parts that look like a secret (8 characters or
    /// more, not all letters): a plain word (`X-Auth-Provider: github`) would be masked in
    /// every message. Empty for other headers, and for a value with `${VAR}` references (the
    /// values they expand to are the secrets).
    public var maskedValues: [String] {
        guard carriesCredentials, !value.hasReferences else { return [] }
        func trimmed(_ s: Substring) -> String { String(s.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
        let value = value.expanded
        if name.lowercased() == "cookie" {
            return value.split(separator: ";").filter { pair in
                pair.firstIndex(of: "=").map { Self.looksLikeSecret(pair[pair.index(after: $0)...]) } ?? false
            }.map(trimmed)
        }
        let part = value.firstIndex(of: " ").map { value[value.index(after: $0)...] } ?? Substring(value)
        return Self.looksLikeSecret(part) ? [trimmed(part)] : []
    }

    /// Whether a credential written out looks like a secret: 8 characters or more, not all
    /// letters. A plain word (`X-Auth-Provider: github`) would be masked in every message.
    static func looksLikeSecret(_ text: Substring) -> Bool {
        text.count >= 8 && !text.allSatisfy(\.isLetter)
    }
}

/// A string from the manifest that may contain `${VAR}` / `${VAR:-default}` references.
///
/// `written` is what the manifest says and is the only form ever printed; `expanded` is what is
/// sent over the wire. When a reference was expanded, the substituted values are listed in
/// `secrets` so that output can be scrubbed of them.
public struct Template: Sendable, Equatable, CustomStringConvertible {
    /// The text as written in the manifest; safe to print.
    public var written: String
    /// The text with every reference expanded; never print it.
    public var expanded: String
    /// The values substituted from the environment (or defaults), non-empty ones only.
    public var secrets: [String]

    /// Creates a template from its three forms (the manifest's loader expands them).
    public init(written: String, expanded: String, secrets: [String]) {
        self.written = written
        self.expanded = expanded
        self.secrets = secrets
    }

    /// A template with no references.
    public init(literal: String) {
        self.init(written: literal, expanded: literal, secrets: [])
    }

    /// Whether any `${...}` reference was expanded.
    public var hasReferences: Bool { written != expanded || written.contains("${") }

    /// Prints as written, with the passwords and tokens written out in it masked
    /// (`https://user:***@host/?token=***`), so that interpolating a template never leaks a
    /// secret. `dump` and `String(reflecting:)` show the same (`Template+Printing.swift`).
    public var description: String { masked }
}

/// An expected checksum of a download, lowercase hex.
public enum Checksum: Sendable, Equatable, CustomStringConvertible {
    case sha256(String)
    case md5(String)

    public var algorithm: String {
        switch self {
        case .sha256: return "sha256"
        case .md5: return "md5"
        }
    }

    public var hex: String {
        switch self {
        case .sha256(let h), .md5(let h): return h
        }
    }

    public var description: String { "\(algorithm):\(hex)" }
}

/// One entry of `downloads:`.
public struct Download: Sendable {
    /// Zero-based index in `downloads:`; messages print it as `downloads[N]`.
    public var index: Int
    /// For a download listed from an `s3://` prefix, the object's position among the prefix's
    /// objects (from 0), which tells it from its siblings; nil for an entry as written.
    public var object: Int?
    /// Where the entry starts (the `-` of the sequence item).
    public var location: SourceLocation
    /// The URL; `expanded` is an http(s) URL.
    public var url: Template
    /// The destination as written.
    public var to: String
    /// The destination resolved to an absolute, normalized path.
    public var destination: String
    /// `allow_outside: true` lets `to` point outside the manifest's folder.
    public var allowOutside: Bool
    /// `sha256:` or `md5:` (if both are given, both are checked; `checksums` lists them all).
    public var checksums: [Checksum]
    /// Settings with the defaults merged in (headers merged by name).
    public var settings: Settings
    /// `unzip: true`: the download is an archive (zip, tar, tar.gz) unpacked into `destination`,
    /// which is then a folder.
    public var unzip = false
    /// `strip_components: N`: leading path components dropped from every entry, like tar's.
    public var stripComponents = 0
    /// `max_unpacked_size: 2GiB`: with `unzip`, the most the archive may unpack to; nil: only
    /// the free space of the destination's file system limits it.
    public var maxUnpackedSize: Int64?
    /// Another download of this run fetches the same URL (to another destination). Their cache
    /// entries must then be told apart by destination: two entries filling one `.data` file at
    /// once could put a mix of both in place. Set by `markSharedURLs`.
    public var sharesURL = false

    /// The bucket and key of an `s3://` URL; nil for http(s).
    public var s3: S3Location? { try? S3Location(parsing: url.expanded) }

    public init(index: Int, location: SourceLocation, url: Template, to: String, destination: String,
                allowOutside: Bool, checksums: [Checksum], settings: Settings) {
        self.index = index
        self.location = location
        self.url = url
        self.to = to
        self.destination = destination
        self.allowOutside = allowOutside
        self.checksums = checksums
        self.settings = settings
    }

    /// Sets `sharesURL` on every download whose expanded URL another one of `downloads` has too.
    public static func markSharedURLs(_ downloads: inout [Download]) {
        var first: [String: Int] = [:]
        first.reserveCapacity(downloads.count)
        for i in downloads.indices {
            if let j = first.updateValue(i, forKey: downloads[i].url.expanded) {
                downloads[i].sharesURL = true
                downloads[j].sharesURL = true
            }
        }
    }
}

/// One entry of `uploads:`: a local file or folder sent to an http(s) URL.
///
/// `post` sends a `multipart/form-data` body (the `fields` first, then the file part or parts
/// under `field`); `put` sends the file itself as the request body.
public struct Upload: Sendable, Equatable {
    /// How the file is sent (`method:`, written in any case: `post`, `POST`, `Put`).
    public enum Method: String, Sendable, Equatable {
        /// A `multipart/form-data` POST (the default).
        case post
        /// The file as the request body.
        case put
    }

    /// One extra form field of a `post` upload, sent before the file part(s).
    public struct FormField: Sendable, Equatable {
        /// The field name as written (case matters to servers, so it is kept as is).
        public var name: String
        /// The value; may use `${VAR}` (its expansion is a secret).
        public var value: Template

        /// Creates a form field.
        public init(name: String, value: Template) {
            self.name = name
            self.value = value
        }
    }

    /// Zero-based index in `uploads:`; messages print it as `uploads[N]`.
    public var index: Int
    /// Where the entry starts (the `-` of the sequence item).
    public var location: SourceLocation
    /// The source file or folder as written (`from:`).
    public var from: String
    /// `from` resolved against the manifest's folder (or absolute as written) and normalized.
    /// It may lie outside the manifest's folder: reading there is harmless. Its existence is not
    /// checked when the manifest is read.
    public var source: String
    /// The target URL (`to:`); `expanded` is an http(s) URL and may hold secrets.
    public var url: Template
    /// `post` (multipart, the default) or `put`.
    public var method: Method
    /// The form field name of the file part(s) (`field:`, default `file`); only used by `post`.
    public var field: String
    /// Extra form fields in manifest order (`fields:`); always empty for `put`.
    public var fields: [FormField]
    /// The file's media type (`content_type:`), or nil to guess it from the extension.
    public var contentType: String?
    /// Whether a POST may be retried after the request was sent (`retry:`, default false): a
    /// POST is not idempotent, so by default it is retried only when nothing reached the server.
    /// Always false for `put`, which is idempotent and follows `settings.retries` anyway.
    public var retryPost: Bool
    /// Whether a folder is sent as one zip archive (`zip:`, default false).
    public var zip: Bool
    /// With `zip`, whether the archive uses fixed timestamps so that the same tree always gives
    /// the same bytes (`deterministic:`, default true). Meaningless without `zip`.
    public var deterministic: Bool
    /// Settings with the defaults merged in (headers merged by name). Of the download-only
    /// settings (`connections`, `min_split`, `low_speed`) only the defaults' values appear here,
    /// and they do not apply to uploads.
    public var settings: Settings
    /// With an `s3://` target: files at least this large go up as a multipart upload
    /// (`multipart_threshold:`, default 64 MiB).
    public var multipartThreshold: Int64 = Upload.defaultMultipartThreshold
    /// With an `s3://` target: the size of each part of a multipart upload (`part_size:`, default
    /// 16 MiB), raised as needed to stay within S3's 10,000 parts.
    public var partSize: Int64 = Upload.defaultPartSize

    /// `multipart_threshold:` when not given.
    public static let defaultMultipartThreshold: Int64 = 64 << 20
    /// `part_size:` when not given.
    public static let defaultPartSize: Int64 = 16 << 20

    /// The bucket and key (or prefix) of an `s3://` target; nil for http(s).
    public var s3: S3Location? { try? S3Location(parsing: url.expanded) }

    /// With `zip`, the archive's name: the folder's, with `.zip` (under an `s3://` prefix, the
    /// object's name).
    public var archiveName: String {
        Self.archiveName(source: source)
    }

    /// `archiveName` for `source`, before there is an `Upload` (the decoder's check of two
    /// archives under one prefix).
    static func archiveName(source: String) -> String {
        let folder = source.split(separator: "/").last.map(String.init) ?? ""
        return (folder.isEmpty ? "upload" : folder) + ".zip"
    }

    /// The form field name of the file part(s) when `field:` is not given.
    public static let defaultField = "file"

    /// Creates an upload entry.
    public init(index: Int, location: SourceLocation, from: String, source: String, url: Template,
                method: Method = .post, field: String = Upload.defaultField, fields: [FormField] = [],
                contentType: String? = nil, retryPost: Bool = false, zip: Bool = false,
                deterministic: Bool = true, settings: Settings) {
        self.index = index
        self.location = location
        self.from = from
        self.source = source
        self.url = url
        self.method = method
        self.field = field
        self.fields = fields
        self.contentType = contentType
        self.retryPost = retryPost
        self.zip = zip
        self.deterministic = deterministic
        self.settings = settings
    }
}
