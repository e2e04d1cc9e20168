/// The keys of manifest version 1, by where they may appear.
///
/// To add a key: list it here, then decode it where its block is decoded (`decodeSetting` for a
/// setting, `decodeDownload` / `decodeUpload` for an entry key, `decodeManifest` for a top-level
/// key). The lists also feed the `did you mean` suggestions and the "valid keys are" listing.
enum ManifestKeys {
    /// Keys of the document itself.
    static let topLevel = ["version", "cache", "defaults", "downloads", "uploads"]
    /// A top-level `x-...` key is skipped, as in Compose files: it is the place to define an
    /// anchored block (`x-base: &base`) that entries merge in with `<<: *base`.
    static func isExtension(_ key: String) -> Bool {
        key.hasPrefix("x-") && key.count > 2
    }
    /// Settings that apply to the whole run; valid only under `defaults:`.
    static let runWideSettings = ["jobs", "max_connections_per_host", "fsync"]
    /// Settings that `defaults:` sets and each entry may override.
    static let entrySettings = ["retries", "timeout", "headers", "connections", "min_split", "low_speed",
                                "ca_cert", "trusted_redirects", "max_redirects", "allow_insecure_redirects",
                                "netrc", "s3"]
    /// Settings only an entry may set (refused under `defaults:` with a message of their own).
    static let entryOnlySettings = ["insecure"]
    /// Keys of `defaults:`.
    static let defaults = runWideSettings + entrySettings
    /// Keys of one `downloads:` entry.
    static let download = ["url", "to", "sha256", "md5", "allow_outside", "unzip", "strip_components",
                           "max_unpacked_size"] + entrySettings + entryOnlySettings
    /// Keys every `downloads:` entry must have.
    static let downloadRequired = ["url", "to"]
    /// Entry settings that only make sense for downloads (segmented Range requests); refused on
    /// an upload entry with a message of their own.
    static let downloadOnlySettings = ["connections", "min_split", "low_speed"]
    /// Entry settings an upload may override.
    static let uploadSettings = entrySettings.filter { !downloadOnlySettings.contains($0) }
    /// Keys of one `uploads:` entry.
    static let upload = ["from", "to", "method", "field", "fields", "content_type", "retry", "zip",
                         "deterministic", "multipart_threshold", "part_size"] + uploadSettings + entryOnlySettings
    /// Keys of an `s3:` block (under `defaults:` or an entry).
    static let s3 = ["endpoint", "region", "path_style", "profile", "anonymous"]
    /// Upload keys that only make sense for an `s3://` target.
    static let s3UploadOnly = ["multipart_threshold", "part_size"]
    /// Upload keys that make no sense for an `s3://` target (it is always a PUT of the file, or
    /// of the folder's archive with `zip`).
    static let notForS3Uploads = ["method", "field", "fields", "retry"]
    /// Keys every `uploads:` entry must have.
    static let uploadRequired = ["from", "to"]
    /// Upload keys that only make sense with `method: post` (multipart).
    static let postOnly = ["field", "fields", "retry"]

    /// The only manifest versions this syncr reads.
    static let supportedVersions = [1]

    /// Where `cache` points when the manifest does not say.
    static let defaultCache = ".syncr/cache"
}
