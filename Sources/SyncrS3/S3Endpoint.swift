/// Where a store's requests go: an endpoint URL, a region to sign for, and the addressing style.
public struct S3Endpoint: Sendable, Equatable {
    /// `http(s)://host[:port]` without a path; nil for AWS (`https://s3.<region>.amazonaws.com`).
    public var url: String?
    public var region: String
    /// Path-style (`endpoint/bucket/key`) rather than virtual-hosted (`bucket.endpoint/key`).
    public var pathStyle: Bool

    /// Creates an endpoint.
    public init(url: String?, region: String, pathStyle: Bool) {
        self.url = url
        self.region = region
        self.pathStyle = pathStyle
    }

    /// The base URL requests go to.
    public var base: String { url ?? "https://s3.\(region).amazonaws.com" }

    /// The request URL and the `Host` header value for `key` in `bucket` with `query`. A bucket
    /// that cannot be a host name's first label goes path-style whatever the setting
    /// (`isHostLabel`).
    public func request(bucket: String, key: String,
                        query: [(name: String, value: String)] = []) -> (url: String, host: String, path: String) {
        let (scheme, authority, basePath) = Self.split(base)
        let encodedKey = URIEncoding.encode(key, keepSlash: true)
        let host: String, path: String
        if pathStyle || !Self.isHostLabel(bucket) {
            host = authority
            path = basePath + "/" + URIEncoding.encode(bucket) + "/" + encodedKey
        } else {
            host = bucket + "." + authority
            path = basePath + "/" + encodedKey
        }
        let queryString = Self.queryString(query)
        return ("\(scheme)://\(host)\(path)" + (queryString.isEmpty ? "" : "?" + queryString), host, path)
    }

    /// Whether `bucket` can go virtual-hosted, as the first label of the host name: lower-case
    /// letters, digits and `-`, starting and ending with a letter or digit (the AWS SDKs' test).
    /// A dot would not match the wildcard certificate `*.s3.<region>.amazonaws.com`; the
    /// capitals and `_` that older buckets (and other stores) allow are no host name at all, and
    /// DNS ignores case, so `My-Bucket.s3...` reached the bucket `my-bucket`, another one.
    static func isHostLabel(_ bucket: String) -> Bool {
        let bytes = Array(bucket.utf8)
        func alphanumeric(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) }
        guard let first = bytes.first, let last = bytes.last, alphanumeric(first), alphanumeric(last) else { return false }
        return bytes.count <= 63 && bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") }
    }

    /// The query as sent: the same encoding the signature uses, in the order given.
    public static func queryString(_ query: [(name: String, value: String)]) -> String {
        query.map { URIEncoding.encode($0.name) + "=" + URIEncoding.encode($0.value) }.joined(separator: "&")
    }

    /// Scheme, `host[:port]` (a default port dropped, as curl's `Host` header drops it), and a path
    /// without its trailing slash.
    static func split(_ url: String) -> (scheme: String, authority: String, path: String) {
        let scheme = url.prefix { $0 != ":" }.lowercased()
        var rest = url.dropFirst(scheme.count).drop { $0 == ":" || $0 == "/" }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        while path.hasSuffix("/") { path.removeLast() }
        var authority = String(rest).lowercased()
        if (scheme == "http" && authority.hasSuffix(":80")) || (scheme == "https" && authority.hasSuffix(":443")) {
            authority = String(authority.prefix(upTo: authority.lastIndex(of: ":")!))
        }
        return (scheme, authority, path)
    }
}
