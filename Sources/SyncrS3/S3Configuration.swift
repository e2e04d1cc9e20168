/// What an entry says about its store (`s3:` in the manifest), before the environment and the
/// shared files fill in the rest.
public struct S3Options: Sendable, Equatable {
    public var endpoint: String?
    public var region: String?
    public var pathStyle: Bool?
    public var profile: String?
    public var anonymous: Bool

    /// Creates options; nil leaves a value to the environment and the defaults.
    public init(endpoint: String? = nil, region: String? = nil, pathStyle: Bool? = nil, profile: String? = nil,
                anonymous: Bool = false) {
        self.endpoint = endpoint
        self.region = region
        self.pathStyle = pathStyle
        self.profile = profile
        self.anonymous = anonymous
    }
}

/// An entry's store, resolved: where requests go, and the credentials they are signed with (nil
/// for anonymous requests).
public struct S3Configuration: Sendable, Equatable {
    public var endpoint: S3Endpoint
    public var credentials: S3Credentials?

    /// Creates a configuration.
    public init(endpoint: S3Endpoint, credentials: S3Credentials?) {
        self.endpoint = endpoint
        self.credentials = credentials
    }

    /// Resolves `options` the way the AWS tools do.
    ///
    /// - Endpoint: `options.endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, else AWS.
    /// - Region: `options.region`, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region` in
    ///   the config file, else `us-east-1`.
    /// - Path style: `options.pathStyle`, else true with a custom endpoint, false on AWS.
    /// - Credentials (unless anonymous): `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
    ///   `AWS_SESSION_TOKEN` unless the manifest names a profile, then the profile
    ///   (`options.profile`, `AWS_PROFILE`, `default`) in `AWS_SHARED_CREDENTIALS_FILE` (or
    ///   `~/.aws/credentials`), then in `AWS_CONFIG_FILE` (or `~/.aws/config`).
    /// - Throws: `S3ConfigError` when no credentials are found, a named profile does not exist,
    ///   or a file cannot be read.
    public static func resolve(_ options: S3Options, environment: [String: String]) throws(S3ConfigError) -> S3Configuration {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let files = try SharedFiles(environment: environment)
        let profile = options.profile ?? env("AWS_PROFILE") ?? "default"
        let url = options.endpoint ?? env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL")
        if options.endpoint == nil, let url {
            // Checked as the manifest's endpoint is: without a scheme, curl's "Protocol not
            // supported" named neither the variable nor the fix.
            let variable = env("AWS_ENDPOINT_URL_S3") != nil ? "AWS_ENDPOINT_URL_S3" : "AWS_ENDPOINT_URL"
            let lower = url.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > (lower.hasPrefix("https") ? 8 : 7),
                  !url.contains("?"), !url.contains("#"), !url.contains("@"), !url.contains(" ") else {
                throw .badEndpoint(variable: variable, value: url)
            }
        }
        let region = options.region ?? env("AWS_REGION") ?? env("AWS_DEFAULT_REGION")
            ?? files.config?.sections[configSection(profile)]?["region"] ?? "us-east-1"
        let endpoint = S3Endpoint(url: url.map(trimmedEndpoint), region: region, pathStyle: options.pathStyle ?? (url != nil))
        guard !options.anonymous else { return S3Configuration(endpoint: endpoint, credentials: nil) }
        if options.profile == nil, let key = env("AWS_ACCESS_KEY_ID") {
            guard let secret = env("AWS_SECRET_ACCESS_KEY") else { throw .secretMissing(source: "the environment") }
            return S3Configuration(endpoint: endpoint, credentials: S3Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"),
                source: "the environment (AWS_ACCESS_KEY_ID)"))
        }
        let candidates = [(files.credentials, profile), (files.config, configSection(profile))]
        // A profile that gets its keys some other way (a process, SSO, an assumed role) is said
        // as such when no file gives it static keys: "add a [default] profile" to a file that
        // has one sent people to look for a mistake in it, not for their keys.
        var unsupported: (keys: [String], path: String)?
        // Likewise a profile that is there for its settings alone (a [default] with a region):
        // "add a [default] profile" sent people to look at the one they had.
        var keyless: (keys: [String], path: String)?
        for case let (file?, section) in candidates {
            guard let values = file.sections[section] else { continue }
            guard let key = values["aws_access_key_id"] else {
                let keys = unsupportedCredentialKeys(values)
                if unsupported == nil, !keys.isEmpty { unsupported = (keys, file.path) }
                if keyless == nil { keyless = (values.keys.sorted(), file.path) }
                continue
            }
            let source = "profile '\(profile)' in \(file.path)"
            guard let secret = values["aws_secret_access_key"] else { throw .secretMissing(source: source) }
            return S3Configuration(endpoint: endpoint, credentials: S3Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"], source: source))
        }
        if let unsupported {
            throw .unsupportedCredentials(profile: profile, keys: unsupported.keys, path: unsupported.path,
                                          manifestProfile: options.profile != nil)
        }
        if let keyless {
            throw .profileWithoutKeys(profile: profile, path: keyless.path, keys: keyless.keys,
                                      credentialsFile: files.paths[0], manifestProfile: options.profile != nil)
        }
        throw .noCredentials(profile: profile, explicitProfile: options.profile != nil || env("AWS_PROFILE") != nil,
                             looked: files.paths)
    }

    /// The keys of a profile that would give the AWS tools its credentials and that syncr does
    /// not act on (it reads only static keys): `credential_process`, the `sso_` keys,
    /// `role_arn` (with `source_profile` or `credential_source`), `web_identity_token_file`;
    /// sorted, so that the message is the same every run.
    static func unsupportedCredentialKeys(_ values: [String: String]) -> [String] {
        let named: Set = ["credential_process", "role_arn", "source_profile", "credential_source", "web_identity_token_file"]
        return values.keys.filter { named.contains($0) || $0.hasPrefix("sso_") }.sorted()
    }

    /// The config file names a profile `[profile name]`, except `[default]`.
    static func configSection(_ profile: String) -> String {
        profile == "default" ? "default" : "profile \(profile)"
    }

    static func trimmedEndpoint(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}

/// The two shared files, where they are looked for and what they hold.
struct SharedFiles {
    var credentials: SharedConfigFile?
    var config: SharedConfigFile?
    var paths: [String]

    init(environment: [String: String]) throws(S3ConfigError) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "~"
        let credentialsPath = environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? home + "/.aws/credentials"
        let configPath = environment["AWS_CONFIG_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.aws/config"
        credentials = try SharedConfigFile(path: credentialsPath)
        config = try SharedConfigFile(path: configPath)
        paths = [credentialsPath, configPath]
    }
}

/// Why an entry's store could not be set up; `description` says what to do.
public enum S3ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    case noCredentials(profile: String, explicitProfile: Bool, looked: [String])
    case secretMissing(source: String)
    case unreadable(path: String, reason: String)
    /// The endpoint an environment variable gives is not an http(s) URL.
    case badEndpoint(variable: String, value: String)
    /// The profile exists (in `path`) but gets its credentials through `keys` (a
    /// `credential_process`, SSO, an assumed role), which syncr does not run, and no file gives
    /// it static keys. `manifestProfile`: the manifest's `s3: profile:` names it, so keys in the
    /// environment are not used either.
    case unsupportedCredentials(profile: String, keys: [String], path: String, manifestProfile: Bool)
    /// The profile exists (in `path`, setting only `keys`, such as `region`) but gives no access
    /// key, and no file gives it one: its keys belong in `credentialsFile` (or, unless
    /// `manifestProfile`, since the manifest's `s3: profile:` shuts them out, the environment).
    case profileWithoutKeys(profile: String, path: String, keys: [String], credentialsFile: String, manifestProfile: Bool)

    public var description: String {
        switch self {
        case .noCredentials(let profile, let explicit, let looked):
            let files = looked.joined(separator: " or ")
            if explicit {
                return "no credentials for profile '\(profile)' in \(files); add aws_access_key_id and aws_secret_access_key to it"
            }
            return "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add a [\(profile)] profile to \(files), or set anonymous: true under s3: for a public bucket"
        case .secretMissing(let source):
            return "\(source) has an access key ID but no secret access key; set AWS_SECRET_ACCESS_KEY (or aws_secret_access_key)"
        case .unreadable(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .unsupportedCredentials(let profile, let keys, let path, let manifestProfile):
            let way: String
            if keys.contains("credential_process") {
                way = "credential_process, which syncr does not run"
            } else if keys.contains(where: { $0.hasPrefix("sso_") }) {
                way = "SSO (\(keys.filter { $0.hasPrefix("sso_") }.joined(separator: ", "))), which syncr does not sign in with"
            } else if keys.contains("web_identity_token_file") {
                way = "web_identity_token_file, which syncr does not exchange for keys"
            } else {
                way = "an assumed role (\(keys.joined(separator: ", "))), which syncr does not assume"
            }
            var text = "profile '\(profile)' in \(path) uses \(way); export AWS_ACCESS_KEY_ID and "
                + "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) first, e.g. with "
                + "eval \"$(aws configure export-credentials --profile \(profile) --format env)\""
            if manifestProfile {
                text += ", and remove profile: from the entry's s3: (syncr reads those variables only when the manifest names no profile)"
            }
            return text
        case .profileWithoutKeys(let profile, let path, let keys, let credentialsFile, let manifestProfile):
            let sets = keys.isEmpty ? "it is empty" : "it sets only \(keys.joined(separator: ", "))"
            var text = "profile '\(profile)' in \(path) has no credentials (\(sets)): add aws_access_key_id and "
                + "aws_secret_access_key under [\(profile)] in \(credentialsFile)"
            if !manifestProfile { text += ", or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" }
            return text + ", or set anonymous: true under s3: for a public bucket"
        case .badEndpoint(let variable, let value):
            return "\(variable)=\(value) is not an http(s) URL like http://127.0.0.1:8333 (no user, query or fragment); "
                + "set it to one, with its scheme"
        }
    }
}
