/// The `s3:` block of `defaults:` or an entry: where an `s3://` URL's store is and how to sign
/// for it. nil leaves a value to the environment (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`,
/// `AWS_PROFILE`, ...) and the built-in defaults; an entry's block overrides the defaults' key by
/// key.
public struct S3Settings: Sendable, Hashable {
    /// `endpoint:` an `http(s)://host[:port]` URL; nil: AWS (or the environment's).
    public var endpoint: String?
    /// `region:` the region requests are signed for.
    public var region: String?
    /// `path_style:` `endpoint/bucket/key` rather than `bucket.endpoint/key`.
    public var pathStyle: Bool?
    /// `profile:` the profile of the shared credentials and config files.
    public var profile: String?
    /// `anonymous:` send unsigned requests (public buckets).
    public var anonymous: Bool?

    /// Creates settings; nil everywhere says nothing.
    public init(endpoint: String? = nil, region: String? = nil, pathStyle: Bool? = nil, profile: String? = nil,
                anonymous: Bool? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.pathStyle = pathStyle
        self.profile = profile
        self.anonymous = anonymous
    }

    /// `base` with the values this block sets.
    func applied(to base: S3Settings) -> S3Settings {
        S3Settings(endpoint: endpoint ?? base.endpoint, region: region ?? base.region,
                   pathStyle: pathStyle ?? base.pathStyle, profile: profile ?? base.profile,
                   anonymous: anonymous ?? base.anonymous)
    }
}
