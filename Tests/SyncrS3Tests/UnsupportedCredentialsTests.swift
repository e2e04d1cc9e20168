import Foundation
import Testing
import SyncrS3

/// A profile that gets its credentials in a way syncr does not run (a `credential_process`,
/// SSO, an assumed role) is named as such, with the way to hand its keys over, instead of "add
/// a [default] profile" to a file that has one.
@Suite(.timeLimit(.minutes(10))) struct UnsupportedCredentialsTests {
    let folder: String
    /// HOME for every resolve: a folder that does not exist, so that `~/.aws` is never read.
    let home: String
    let credentials: String
    let config: String

    init() throws {
        folder = NSTemporaryDirectory() + "s3unsupported-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        home = folder + "/no-home"
        credentials = folder + "/credentials"
        config = folder + "/config"
    }

    /// The environment with both files named, and `extra` on top.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home, "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_CONFIG_FILE": config].merging(extra) { $1 }
    }

    func write(credentials text: String? = nil, config configText: String? = nil) throws {
        if let text { try text.write(toFile: credentials, atomically: true, encoding: .utf8) }
        if let configText { try configText.write(toFile: config, atomically: true, encoding: .utf8) }
    }

    @Test func aCredentialProcessProfileIsNamedWithTheWayToExportItsKeys() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(credentials: "[default]\ncredential_process = /path/proc.sh\n", config: "[default]\nregion = eu-west-1\n")
        let expected = S3ConfigError.unsupportedCredentials(profile: "default", keys: ["credential_process"], path: credentials,
                                                            manifestProfile: false)
        #expect(throws: expected) { try S3Configuration.resolve(S3Options(), environment: environment()) }
        #expect(expected.description == "profile 'default' in \(credentials) uses credential_process, which syncr does not run; "
            + "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) first, e.g. with "
            + #"eval "$(aws configure export-credentials --profile default --format env)""#)
        // The same profile in the config file instead.
        try FileManager.default.removeItem(atPath: credentials)
        try write(config: "[default]\nregion = eu-west-1\ncredential_process = /path/proc.sh\n")
        #expect(throws: S3ConfigError.unsupportedCredentials(profile: "default", keys: ["credential_process"], path: config,
                                                             manifestProfile: false)) {
            try S3Configuration.resolve(S3Options(), environment: environment())
        }
    }

    /// An SSO profile chosen by `AWS_PROFILE`, and by the manifest's `profile:`, which also
    /// shuts the environment's keys out: the message says to drop it.
    @Test func anSSOProfileIsNamedAndAManifestProfileIsToldToGo() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(config: """
            [profile ci]
            sso_session = corp
            sso_account_id = 111122223333
            sso_role_name = ReadOnly
            region = us-east-2
            [sso-session corp]
            sso_start_url = https://corp.awsapps.com/start
            sso_region = us-east-1
            """)
        let keys = ["sso_account_id", "sso_role_name", "sso_session"]
        let byVariable = S3ConfigError.unsupportedCredentials(profile: "ci", keys: keys, path: config, manifestProfile: false)
        #expect(throws: byVariable) {
            try S3Configuration.resolve(S3Options(), environment: environment(["AWS_PROFILE": "ci"]))
        }
        #expect(byVariable.description.hasPrefix("profile 'ci' in \(config) uses SSO (sso_account_id, sso_role_name, sso_session), which syncr does not sign in with; "))
        #expect(byVariable.description.contains("--profile ci --format env"))
        #expect(!byVariable.description.contains("remove profile:"))

        let byManifest = S3ConfigError.unsupportedCredentials(profile: "ci", keys: keys, path: config, manifestProfile: true)
        #expect(throws: byManifest) {
            try S3Configuration.resolve(S3Options(profile: "ci"), environment: environment(["AWS_ACCESS_KEY_ID": "AKIDENV"]))
        }
        #expect(byManifest.description.hasSuffix(", and remove profile: from the entry's s3: "
            + "(syncr reads those variables only when the manifest names no profile)"))
    }

    @Test func anAssumedRoleProfileIsNamed() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(config: "[profile deploy]\nrole_arn = arn:aws:iam::111122223333:role/deploy\nsource_profile = default\n")
        let expected = S3ConfigError.unsupportedCredentials(profile: "deploy", keys: ["role_arn", "source_profile"], path: config,
                                                            manifestProfile: true)
        #expect(throws: expected) { try S3Configuration.resolve(S3Options(profile: "deploy"), environment: environment()) }
        #expect(expected.description.contains("uses an assumed role (role_arn, source_profile), which syncr does not assume; "))
    }

    /// What worked before still does: static keys anywhere for the profile win, keys in the
    /// environment win when the manifest names no profile, and a profile with no way to get
    /// keys at all (a region only) is still "no S3 credentials".
    @Test func staticKeysAndTheEnvironmentStillWin() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(credentials: "[default]\ncredential_process = /path/proc.sh\n",
                  config: "[default]\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = config-secret\n")
        let fromConfig = try S3Configuration.resolve(S3Options(), environment: environment())
        #expect(fromConfig.credentials?.accessKeyID == "AKIDCONFIG")

        try write(config: "[default]\nregion = eu-west-1\n")
        let fromEnvironment = try S3Configuration.resolve(S3Options(), environment: environment([
            "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"]))
        #expect(fromEnvironment.credentials?.accessKeyID == "AKIDENV")

        try write(credentials: "[default]\nregion = eu-west-1\n")
        #expect(throws: S3ConfigError.profileWithoutKeys(profile: "default", path: credentials, keys: ["region"],
                                                         credentialsFile: credentials, manifestProfile: false)) {
            try S3Configuration.resolve(S3Options(), environment: environment())
        }
    }

    /// A `[default]` that sets only a region (in the config file, where `aws configure set
    /// region` puts it) is named as there and keyless, with the keys to add and where, not
    /// "add a [default] profile" to a file that has one.
    @Test func aProfileWithOnlyARegionIsNamedWithTheKeysToAdd() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(config: "[default]\nregion = eu-west-1\noutput = json\n")
        let expected = S3ConfigError.profileWithoutKeys(profile: "default", path: config, keys: ["output", "region"],
                                                        credentialsFile: credentials, manifestProfile: false)
        #expect(throws: expected) { try S3Configuration.resolve(S3Options(), environment: environment()) }
        #expect(expected.description == "profile 'default' in \(config) has no credentials (it sets only output, region): "
            + "add aws_access_key_id and aws_secret_access_key under [default] in \(credentials), "
            + "or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or set anonymous: true under s3: for a public bucket")
        // Named by the manifest: the environment's keys are not read, so they are not offered.
        try write(config: "[profile ci]\nregion = eu-west-1\n")
        let named = S3ConfigError.profileWithoutKeys(profile: "ci", path: config, keys: ["region"],
                                                     credentialsFile: credentials, manifestProfile: true)
        #expect(throws: named) { try S3Configuration.resolve(S3Options(profile: "ci"), environment: environment()) }
        #expect(named.description == "profile 'ci' in \(config) has no credentials (it sets only region): "
            + "add aws_access_key_id and aws_secret_access_key under [ci] in \(credentials), "
            + "or set anonymous: true under s3: for a public bucket")
        // No profile at all is still said as before.
        try FileManager.default.removeItem(atPath: config)
        #expect(throws: S3ConfigError.noCredentials(profile: "default", explicitProfile: false, looked: [credentials, config])) {
            try S3Configuration.resolve(S3Options(), environment: environment())
        }
    }
}
