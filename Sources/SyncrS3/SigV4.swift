#if canImport(Glibc)
import Glibc
#endif
import SyncrDigest

/// The keys a request is signed with. The secret and the token are secrets: never print them
/// (`description` does not show them).
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN` / `aws_session_token`: temporary credentials, sent as
    /// `X-Amz-Security-Token`.
    public var sessionToken: String?
    /// Where they were found, for messages: "the environment (AWS_ACCESS_KEY_ID)",
    /// "profile 'ci' in /home/me/.aws/credentials".
    public var source: String

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, source: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    /// The source and the access key ID (which AWS itself shows in errors); never the secrets.
    public var description: String { "access key \(accessKeyID) from \(source)" }

    /// What must be masked in every message: the secret key and the session token.
    public var secrets: [String] { [secretAccessKey] + (sessionToken.map { [$0] } ?? []) }
}

/// A request as AWS Signature Version 4 sees it.
public struct SignableRequest: Sendable {
    /// `GET`, `HEAD`, `PUT`, `POST`, `DELETE`.
    public var method: String
    /// The `Host` header as it will be sent: `host` or `host:port` (a non-default port).
    public var host: String
    /// The path exactly as it goes on the wire, already percent-encoded (S3 does not normalize
    /// it, so `//` and `.` segments stay as they are).
    public var path: String
    /// Query parameters, decoded; they are encoded for signing (and must be sent encoded the
    /// same way: `S3Endpoint.queryString`).
    public var query: [(name: String, value: String)]
    /// Headers sent with the request, besides `Host` (added by signing).
    public var headers: [(name: String, value: String)]
    /// The hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    public var payloadHash: String

    /// Creates a request to sign.
    public init(method: String, host: String, path: String, query: [(name: String, value: String)] = [],
                headers: [(name: String, value: String)] = [], payloadHash: String = SigV4.emptyPayloadHash) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
        self.payloadHash = payloadHash
    }
}

/// AWS Signature Version 4 (the `Authorization` header form), as S3 and every AWS service take it.
///
/// Follows the published algorithm (docs.aws.amazon.com, "Create a signed AWS API request"):
/// canonical request, string to sign, a signing key derived from the secret by a chain of
/// HMAC-SHA256 over date, region, service and `aws4_request`. Checked against AWS's test suite
/// and against botocore's signatures (Tests/SyncrS3Tests).
public struct SigV4: Sendable {
    public var credentials: S3Credentials
    public var region: String
    /// `s3` for S3; the test suite uses `service`.
    public var service: String

    /// The SHA-256 of no bytes: the payload hash of GET, HEAD and DELETE.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash of a body that is not hashed for the signature (its integrity is checked
    /// with `Content-MD5` or `x-amz-checksum-sha256` instead).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// Headers never signed: hop-by-hop ones a proxy or curl may change, as botocore leaves out.
    static let unsignedHeaders: Set<String> = ["connection", "expect", "keep-alive", "proxy-authenticate",
                                               "proxy-authorization", "te", "trailer", "transfer-encoding",
                                               "upgrade", "user-agent", "x-amzn-trace-id", "authorization"]

    /// Creates a signer.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to `request` so that it is signed at `time` (seconds since 1970):
    /// `X-Amz-Date`, `X-Amz-Content-SHA256` (for S3), `X-Amz-Security-Token` (with a session
    /// token) and `Authorization`.
    public func sign(_ request: SignableRequest, at time: Int) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(time)
        var added: [(name: String, value: String)] = [("X-Amz-Date", stamp)]
        if service == "s3" { added.append(("X-Amz-Content-SHA256", request.payloadHash)) }
        if let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }
        var signed = request
        signed.headers += added
        let canonical = canonicalRequest(signed)
        let signature = hexString(HMAC.sha256(key: signingKey(date: String(stamp.prefix(8))),
                                              stringToSign(canonical: canonical.text, timestamp: stamp)))
        added.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(stamp)), "
                                       + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"))
        return added
    }

    /// The canonical request (its text, and the `SignedHeaders` list) of a request that already
    /// carries its `X-Amz-*` headers.
    public func canonicalRequest(_ request: SignableRequest) -> (text: String, signedHeaders: String) {
        let headers = Self.canonicalHeaders([("host", request.host)] + request.headers)
        let signedHeaders = headers.map(\.name).joined(separator: ";")
        let lines = [request.method.uppercased(), request.path.isEmpty ? "/" : request.path,
                     Self.canonicalQuery(request.query),
                     headers.map { "\($0.name):\($0.value)\n" }.joined(), signedHeaders, request.payloadHash]
        return (lines.joined(separator: "\n"), signedHeaders)
    }

    /// The string to sign for a canonical request made at `timestamp` (`yyyyMMddTHHmmssZ`).
    public func stringToSign(canonical: String, timestamp: String) -> String {
        ["AWS4-HMAC-SHA256", timestamp, scope(timestamp), Digest.sha256Hex(canonical)].joined(separator: "\n")
    }

    /// The signing key for a day (`yyyyMMdd`).
    func signingKey(date: String) -> [UInt8] {
        var key = HMAC.sha256(key: Array("AWS4\(credentials.secretAccessKey)".utf8), date)
        for part in [region, service, "aws4_request"] { key = HMAC.sha256(key: key, part) }
        return key
    }

    func scope(_ timestamp: String) -> String {
        "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// Names lower-cased and sorted, values trimmed with inner runs of spaces folded to one, the
    /// values of a repeated name joined with commas in the order sent.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            let lower = name.lowercased()
            guard !unsignedHeaders.contains(lower) else { continue }
            values[lower, default: []].append(foldSpaces(value))
        }
        return values.keys.sorted().map { ($0, values[$0]!.joined(separator: ",")) }
    }

    /// Names and values encoded, sorted by name then value, `name=value` joined by `&`.
    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (URIEncoding.encode($0.name), URIEncoding.encode($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    static func foldSpaces(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// `yyyyMMddTHHmmssZ` in UTC.
    public static func timestamp(_ time: Int) -> String {
        var seconds = time_t(time)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
