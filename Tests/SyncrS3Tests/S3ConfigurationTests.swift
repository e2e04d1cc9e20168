import Foundation
import Testing
import SyncrS3

@Suite(.timeLimit(.minutes(10))) struct S3ConfigurationTests {
    let home: String

    init() throws {
        home = NSTemporaryDirectory() + "s3config-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
        try """
            [default]
            aws_access_key_id = AKIDFILE
            aws_secret_access_key = file/secret
            # a comment
            [ci]
            aws_access_key_id=AKIDCI
            aws_secret_access_key=ci-secret
            aws_session_token = ci-token
            """.write(toFile: home + "/.aws/credentials", atomically: true, encoding: .utf8)
        try """
            [default]
            region = ap-south-1
            [profile other]
            region = sa-east-1
            aws_access_key_id = AKIDCONFIG
            aws_secret_access_key = config-secret
            s3 =
              addressing_style = path
            """.write(toFile: home + "/.aws/config", atomically: true, encoding: .utf8)
    }

    @Test func environmentComesFirst() throws {
        let env = ["HOME": home, "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "tok"]
        let config = try S3Configuration.resolve(S3Options(), environment: env)
        #expect(config.credentials == S3Credentials(accessKeyID: "AKIDENV", secretAccessKey: "env-secret", sessionToken: "tok",
                                                    source: "the environment (AWS_ACCESS_KEY_ID)"))
        #expect(config.endpoint == S3Endpoint(url: nil, region: "ap-south-1", pathStyle: false))
    }

    @Test func sharedFilesForTheProfile() throws {
        let ci = try S3Configuration.resolve(S3Options(profile: "ci"), environment: ["HOME": home, "AWS_ACCESS_KEY_ID": "AKIDENV"])
        #expect(ci.credentials?.accessKeyID == "AKIDCI")
        #expect(ci.credentials?.sessionToken == "ci-token")
        #expect(ci.credentials?.source == "profile 'ci' in \(home)/.aws/credentials")
        let other = try S3Configuration.resolve(S3Options(), environment: ["HOME": home, "AWS_PROFILE": "other"])
        #expect(other.credentials?.accessKeyID == "AKIDCONFIG")
        #expect(other.endpoint.region == "sa-east-1")
    }

    @Test func endpointAndRegionFromTheEnvironment() throws {
        let env = ["HOME": home, "AWS_ENDPOINT_URL": "http://other:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:8333/",
                   "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"]
        let config = try S3Configuration.resolve(S3Options(anonymous: true), environment: env)
        #expect(config.endpoint == S3Endpoint(url: "http://127.0.0.1:8333", region: "eu-west-1", pathStyle: true))
        #expect(config.credentials == nil)
        let manifest = try S3Configuration.resolve(S3Options(endpoint: "http://m:2", region: "r1", pathStyle: false, anonymous: true), environment: env)
        #expect(manifest.endpoint == S3Endpoint(url: "http://m:2", region: "r1", pathStyle: false))
    }

    /// Each variable's fallback on its own: `AWS_ENDPOINT_URL` without `AWS_ENDPOINT_URL_S3`,
    /// `AWS_DEFAULT_REGION` without `AWS_REGION`, and with neither nor a profile region us-east-1.
    @Test func eachFallbackOnItsOwn() throws {
        let nowhere = home + "/nowhere"
        let general = try S3Configuration.resolve(S3Options(anonymous: true), environment: [
            "HOME": nowhere, "AWS_ENDPOINT_URL": "http://store:9000", "AWS_DEFAULT_REGION": "us-west-2"])
        #expect(general.endpoint == S3Endpoint(url: "http://store:9000", region: "us-west-2", pathStyle: true))
        let bare = try S3Configuration.resolve(S3Options(anonymous: true), environment: ["HOME": nowhere])
        #expect(bare.endpoint == S3Endpoint(url: nil, region: "us-east-1", pathStyle: false))
    }

    /// The `[default]` profile of the credentials file, and files named by
    /// `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` instead of `~/.aws`.
    @Test func defaultProfileAndFilesNamedByTheEnvironment() throws {
        let plain = try S3Configuration.resolve(S3Options(), environment: ["HOME": home])
        #expect(plain.credentials == S3Credentials(accessKeyID: "AKIDFILE", secretAccessKey: "file/secret", sessionToken: nil,
                                                   source: "profile 'default' in \(home)/.aws/credentials"))
        #expect(plain.endpoint.region == "ap-south-1")
        try "[default]\naws_access_key_id = AKIDMOVED\naws_secret_access_key = moved-secret\n"
            .write(toFile: home + "/creds", atomically: true, encoding: .utf8)
        try "[default]\nregion = eu-north-1\n".write(toFile: home + "/conf", atomically: true, encoding: .utf8)
        let moved = try S3Configuration.resolve(S3Options(), environment: [
            "HOME": home, "AWS_SHARED_CREDENTIALS_FILE": home + "/creds", "AWS_CONFIG_FILE": home + "/conf"])
        #expect(moved.credentials?.accessKeyID == "AKIDMOVED")
        #expect(moved.credentials?.source == "profile 'default' in \(home)/creds")
        #expect(moved.endpoint.region == "eu-north-1")
    }

    @Test func missingCredentialsSayWhereTheyWereLookedFor() {
        let env = ["HOME": home + "/nowhere"]
        #expect(throws: S3ConfigError.noCredentials(profile: "default", explicitProfile: false,
                                                    looked: [home + "/nowhere/.aws/credentials", home + "/nowhere/.aws/config"])) {
            try S3Configuration.resolve(S3Options(), environment: env)
        }
        let text = S3ConfigError.noCredentials(profile: "default", explicitProfile: false, looked: ["a", "b"]).description
        #expect(text.contains("AWS_ACCESS_KEY_ID") && text.contains("anonymous: true"))
        #expect(throws: S3ConfigError.self) { try S3Configuration.resolve(S3Options(profile: "nope"), environment: ["HOME": home]) }
    }

    @Test func credentialsNeverDescribeTheirSecrets() throws {
        let config = try S3Configuration.resolve(S3Options(profile: "ci"), environment: ["HOME": home])
        let text = "\(config.credentials!)"
        #expect(!text.contains("ci-secret") && !text.contains("ci-token"))
        #expect(config.credentials!.secrets == ["ci-secret", "ci-token"])
    }

    /// An endpoint from the environment is held to the manifest's rule, naming the variable
    /// (without a scheme, curl said "Protocol not supported").
    @Test(arguments: ["127.0.0.1:9000", "ftp://h", "http://u:p@h", "http://h/?x"])
    func anEnvironmentEndpointThatIsNoURLIsNamed(value: String) {
        let env = ["HOME": home, "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": value]
        #expect(throws: S3ConfigError.badEndpoint(variable: "AWS_ENDPOINT_URL", value: value)) {
            try S3Configuration.resolve(S3Options(), environment: env)
        }
        #expect(throws: Never.self) {
            try S3Configuration.resolve(S3Options(endpoint: "http://127.0.0.1:9000"), environment: env)
        }
    }
}
