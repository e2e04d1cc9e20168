/// Settings as one block (`defaults:` or an entry) wrote them: nil where the block is silent.
struct SettingsOverrides {
    var jobs: Int?
    var retries: Int?
    var timeoutMilliseconds: Int?
    var headers: [Header]?
    var connections: Int?
    var minSplit: Int64?
    var lowSpeed: Int64?
    var maxConnectionsPerHost: Int?
    var fsync: Bool?
    var caCertificate: (resolved: String, written: String)?
    var insecure: Bool?
    var trustedRedirects: Bool?
    var maxRedirects: Int?
    var allowInsecureRedirects: Bool?
    var netrc: Bool?
    var s3: S3Settings?

    /// `base` with these overrides applied. Headers merge by case-insensitive name: an override
    /// replaces the base header in place (keeping the base's position), new names follow in order.
    func applied(to base: Settings) -> Settings {
        var result = base
        if let jobs { result.jobs = jobs }
        if let retries { result.retries = retries }
        if let timeoutMilliseconds {
            result.timeoutMilliseconds = timeoutMilliseconds
            result.timeoutWritten = true
        }
        if let connections { result.connections = connections }
        if let minSplit { result.minSplit = minSplit }
        if let lowSpeed { result.lowSpeed = lowSpeed }
        if let maxConnectionsPerHost { result.maxConnectionsPerHost = maxConnectionsPerHost }
        if let fsync { result.fsync = fsync }
        if let caCertificate {
            result.network.caCertificate = caCertificate.resolved
            result.network.caCertificateWritten = caCertificate.written
        }
        if let insecure { result.network.insecure = insecure }
        if let trustedRedirects { result.network.trustedRedirects = trustedRedirects }
        if let maxRedirects { result.network.maxRedirects = maxRedirects }
        if let allowInsecureRedirects { result.network.allowInsecureRedirects = allowInsecureRedirects }
        if let netrc { result.network.netrc = netrc }
        if let s3 { result.s3 = s3.applied(to: base.s3) }
        if let headers {
            var merged = base.headers
            for header in headers {
                let name = header.name.lowercased()
                if let i = merged.firstIndex(where: { $0.name.lowercased() == name }) {
                    merged[i] = header
                } else {
                    merged.append(header)
                }
            }
            result.headers = merged
        }
        return result
    }
}

extension ManifestDecoder {
    /// Limits of the numeric settings.
    static let jobsRange = 1...256
    static let retriesRange = 0...100
    static let connectionsRange = 1...64
    static let maxConnectionsPerHostRange = 1...256
    static let minSplitRange: ClosedRange<Int64> = (64 << 10)...(1 << 40)
    static let lowSpeedRange: ClosedRange<Int64> = 1...(1 << 40)
    static let maxRedirectsRange = 0...100

    /// Decodes `key` if it is a setting, into `settings`.
    ///
    /// - Parameter runWide: whether run-wide settings (`jobs`) are allowed here (only in
    ///   `defaults:`).
    /// - Returns: false when `key` is not a setting at all, so the caller can try its own keys.
    mutating func decodeSetting(_ entry: Entry, parent: String, runWide: Bool,
                                into settings: inout SettingsOverrides) -> Bool
    {
        let path = Self.join(parent, entry.key)
        switch entry.key {
        case "jobs":
            guard runWide else {
                report(path, at: entry.keyMark, "jobs applies to the whole run; set it under defaults:")
                return true
            }
            settings.jobs = integer(entry.value, path: path, range: Self.jobsRange)
        case "max_connections_per_host":
            guard runWide else {
                report(path, at: entry.keyMark, "max_connections_per_host applies to the whole run; set it under defaults:")
                return true
            }
            settings.maxConnectionsPerHost = integer(entry.value, path: path, range: Self.maxConnectionsPerHostRange)
        case "fsync":
            guard runWide else {
                report(path, at: entry.keyMark, "fsync applies to the whole run; set it under defaults:")
                return true
            }
            settings.fsync = bool(entry.value, path: path)
        case "connections":
            settings.connections = integer(entry.value, path: path, range: Self.connectionsRange)
        case "min_split":
            settings.minSplit = size(entry.value, path: path, range: Self.minSplitRange)
        case "low_speed":
            settings.lowSpeed = rate(entry.value, path: path, range: Self.lowSpeedRange)
        case "retries":
            settings.retries = integer(entry.value, path: path, range: Self.retriesRange)
        case "timeout":
            settings.timeoutMilliseconds = duration(entry.value, path: path)
        case "headers":
            settings.headers = headers(entry.value, path: path)
        case "ca_cert":
            settings.caCertificate = caCertificate(entry.value, path: path)
        case "insecure":
            guard !runWide else {
                report(path, at: entry.keyMark,
                       "insecure turns certificate checks off for one entry only; set it on each entry that needs it, not under defaults:",
                       hint: "to trust a private certificate authority for every entry, set ca_cert: under defaults: instead")
                return true
            }
            settings.insecure = bool(entry.value, path: path)
        case "trusted_redirects":
            settings.trustedRedirects = bool(entry.value, path: path)
        case "max_redirects":
            settings.maxRedirects = integer(entry.value, path: path, range: Self.maxRedirectsRange)
        case "allow_insecure_redirects":
            settings.allowInsecureRedirects = bool(entry.value, path: path)
        case "netrc":
            settings.netrc = bool(entry.value, path: path)
        case "s3":
            settings.s3 = s3Settings(entry.value, path: path)
        default:
            return false
        }
        return true
    }

    /// A `headers:` mapping of name to value. Names must be HTTP tokens and unique regardless of
    /// case; values may use `${VAR}` and must not contain line breaks, before or after expansion.
    mutating func headers(_ node: YAMLNode, path: String) -> [Header]? {
        guard let entries = mappingEntries(node, path: path, nullIsEmpty: true, foldCase: true) else { return nil }
        var result: [Header] = []
        var firstLine: [String: Int] = [:]
        var ok = true
        for entry in entries {
            let headerPath = Self.join(path, entry.key)
            guard HTTPSyntax.isToken(entry.key) else {
                report(headerPath, at: entry.keyMark,
                       "\(Self.quoted(entry.key)) is not a valid header name; use letters, digits and !#$%&'*+-.^_`|~")
                ok = false
                continue
            }
            let lower = entry.key.lowercased()
            if let line = firstLine[lower] {
                report(headerPath, at: entry.keyMark,
                       "duplicate header '\(entry.key)' (first at line \(line); header names ignore case)")
                ok = false
                continue
            }
            firstLine[lower] = entry.keyMark.line
            guard let written = string(entry.value, path: headerPath) else {
                ok = false
                continue
            }
            guard !HTTPSyntax.hasLineBreak(written) else {
                report(headerPath, at: entry.value.mark,
                       "a header value cannot contain a line break or NUL")
                ok = false
                continue
            }
            guard let value = template(entry.value, path: headerPath, unsetAllowed: headersUnexpanded) else {
                ok = false
                continue
            }
            guard !HTTPSyntax.hasLineBreak(value.expanded) else {
                // The expanded value is a secret: say what is wrong, never what it is.
                report(headerPath, at: entry.value.mark,
                       "the value contains a line break or NUL after expanding its ${...} references (the value is not shown)")
                ok = false
                continue
            }
            let header = Header(name: entry.key, value: value)
            writtenSecrets += header.maskedValues
            result.append(header)
        }
        return ok ? result : nil
    }
}

extension ManifestDecoder {
    /// `ca_cert:`: a PEM file, relative to the manifest's folder, that must exist now.
    mutating func caCertificate(_ node: YAMLNode, path: String) -> (resolved: String, written: String)? {
        guard let text = pathText(node, path: path, expected: "a file path") else { return nil }
        let resolved = LexicalPath.resolve(text, against: directory)
        switch FileCheck.kind(resolved) {
        case .file:
            return (resolved, text)
        case .missing:
            report(path, at: node.mark,
                   "\(Self.quoted(text)) does not exist (looked for \(resolved)); give the path of a PEM file of CA certificates, relative to the manifest's folder")
        case .directory:
            report(path, at: node.mark,
                   "\(Self.quoted(text)) is a folder; give the path of a PEM file of CA certificates")
        case .unreadable(let reason):
            report(path, at: node.mark, "\(Self.quoted(text)) cannot be read: \(reason)")
        }
        return nil
    }
}

extension Settings {
    /// The files in flight a run may have (`jobs:`, `--jobs`): a library caller's
    /// `RunOptions.jobs` is held to it as the manifest's is.
    public static var jobsRange: ClosedRange<Int> { ManifestDecoder.jobsRange }
}
