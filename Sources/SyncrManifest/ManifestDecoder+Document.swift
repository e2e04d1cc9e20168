extension ManifestDecoder {
    /// Decodes the whole document. Returns nil when anything was reported.
    mutating func decodeManifest(_ root: YAMLNode?) -> Manifest? {
        guard let root, !(root.scalar?.isNull ?? false) else {
            report("", at: nil, "the manifest is empty; it needs at least 'version: 1'")
            return nil
        }
        guard case .mapping = root.content else {
            mismatch("", expected: "a mapping with keys like 'version: 1' at the top level", found: root)
            return nil
        }
        guard let entries = mappingEntries(root, path: "", nullIsEmpty: false) else { return nil }
        var found: [String: Entry] = [:]
        for entry in entries {
            if ManifestKeys.topLevel.contains(entry.key) {
                found[entry.key] = entry
            } else if ManifestKeys.isExtension(entry.key) {
                continue
            } else {
                unknownKey(entry.key, at: entry.keyMark, parent: "", valid: ManifestKeys.topLevel)
            }
        }

        // The version decides how everything else is read, so an unsupported one stops here:
        // a newer manifest's keys would only produce noise.
        var version: Int?
        if let entry = found["version"] {
            let supported = ManifestKeys.supportedVersions.map(String.init).joined(separator: ", ")
            if let v = integer(entry.value, path: "version", range: Int.min...Int.max) {
                guard ManifestKeys.supportedVersions.contains(v) else {
                    report("version", at: entry.value.mark,
                           "unsupported manifest version \(v); this syncr reads version \(supported)")
                    return nil
                }
                version = v
            }
        } else if !mergesBrokenAlias(root) {
            report("", at: root.mark, "missing required key 'version' (add 'version: 1' at the top)")
        }

        var cache = ManifestKeys.defaultCache
        var cacheWritten: Entry?
        if let entry = found["cache"], let text = pathText(entry.value, path: "cache", expected: "a folder path") {
            if text.holdsReference {
                // Paths are not expanded: `${RUNNER_TEMP}/syncr` made a folder of that name.
                report("cache", at: entry.value.mark,
                       "${...} is not expanded in cache: (only in url, headers and form fields); write the path itself, or give it with --cache")
            } else {
                cache = text
                cacheWritten = entry
            }
        }

        let cacheDirectory = LexicalPath.resolve(cache, against: directory)
        if let written = cacheWritten, let problem = CacheAroundManifest.problem(cacheDirectory, directory: directory) {
            report("cache", at: written.value.mark, "\(Self.quoted(cache)): \(problem) (e.g. cache: .syncr-cache)")
        }
        self.cacheDirectory = CacheClash.checkedFolder(cacheDirectory, directory: directory)
        // Before anything is downloaded: a file there failed apply at its start (exit 1), and
        // plan took it for an empty cache. A bad `cache:` value was reported above.
        if found["cache"] == nil || cacheWritten != nil, let problem = cacheFolderProblem?(cacheDirectory) {
            report("cache", at: cacheWritten?.value.mark,
                   "\(Self.quoted(cache))\(cacheWritten == nil ? " (the default)" : ""): \(problem); "
                   + "name a folder for the cache (one that is not there yet is made)")
        }

        var overrides = SettingsOverrides()
        if let entry = found["defaults"] {
            decodeDefaults(entry.value, into: &overrides)
        }
        let defaults = overrides.applied(to: .builtIn)

        var downloads: [Download] = []
        if let entry = found["downloads"] {
            downloads = decodeDownloads(entry.value, defaults: defaults)
        }

        var uploads: [Upload] = []
        if let entry = found["uploads"] {
            uploads = decodeUploads(entry.value, defaults: defaults)
        }

        guard reported.isEmpty, let version else { return nil }
        return Manifest(path: file, directory: directory, version: version, cache: cache,
                        cacheDirectory: cacheDirectory,
                        defaults: defaults, downloads: downloads, uploads: uploads)
    }

    /// The `defaults:` block: settings only; download and upload keys get a pointer to where
    /// they belong.
    mutating func decodeDefaults(_ node: YAMLNode, into overrides: inout SettingsOverrides) {
        guard let entries = mappingEntries(node, path: "defaults", nullIsEmpty: true) else { return }
        for entry in entries {
            if decodeSetting(entry, parent: "defaults", runWide: true, into: &overrides) { continue }
            if ManifestKeys.download.contains(entry.key) {
                report(Self.join("defaults", entry.key), at: entry.keyMark,
                       "\(entry.key) is set on each download entry, not under defaults:")
            } else if ManifestKeys.upload.contains(entry.key), entry.key != "retry" {
                // `retry` is left to the suggestion: under defaults it is far more likely a
                // misspelt `retries` than the upload-only POST flag.
                report(Self.join("defaults", entry.key), at: entry.keyMark,
                       "\(entry.key) is set on each upload entry, not under defaults:")
            } else {
                unknownKey(entry.key, at: entry.keyMark, parent: "defaults", valid: ManifestKeys.defaults)
            }
        }
    }
}
