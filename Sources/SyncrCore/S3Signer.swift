#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// An `s3://` entry's object in its store: the URL its requests go to, and the SigV4 step that
/// `RequestBuilder.finish` applies to every one of them.
struct S3Object: Sendable {
    let location: S3Location
    let configuration: S3Configuration

    /// nil for an http(s) URL, or when the store cannot be resolved (the entry then fails with
    /// `S3Stores.failure` before any request is made). A URL the manifest gave was checked when
    /// it was read; one made from a listing (`S3Listing.entry`) names whatever key the store
    /// holds, `?`, `#` and control characters included.
    init?(url: Template, settings: Settings) {
        guard let location = (try? S3Location(parsing: url.expanded)) ?? S3Location(listed: url.expanded),
              case .success(let configuration) = S3Stores.configuration(settings.s3) else { return nil }
        self.location = location
        self.configuration = configuration
    }

    /// An object of a resolved store.
    init(location: S3Location, configuration: S3Configuration) {
        self.location = location
        self.configuration = configuration
    }

    /// The object a request of this entry goes to, from its display URL (`s3://bucket/key`, as
    /// `Uploader.s3Target` names each file of a folder upload): what an error names. Itself when
    /// the URL is not in its bucket.
    func object(at display: String) -> S3Object {
        let bucket = "s3://\(location.bucket)/"
        guard display.hasPrefix(bucket) else { return self }
        return S3Object(location: S3Location(bucket: location.bucket, key: String(display.dropFirst(bucket.count))),
                        configuration: configuration)
    }

    /// The URL of `key` (the entry's own by default) in the bucket, with `query`.
    func url(key: String? = nil, query: [(name: String, value: String)] = []) -> String {
        configuration.endpoint.request(bucket: location.bucket, key: key ?? location.key, query: query).url
    }

    /// `request` with the SigV4 headers for now; unchanged for an anonymous store. The payload
    /// hash is the request's `X-Amz-Content-SHA256` when the caller set one, else that of no
    /// bytes for a request without a body, else `UNSIGNED-PAYLOAD` (the body's integrity is
    /// then checked by the store through `Content-MD5` or `x-amz-checksum-sha256`).
    ///
    /// Signing again replaces the earlier signature: a retry signs anew, since a store refuses a
    /// signature older than 15 minutes (a large PUT that failed late, a long backoff).
    func sign(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        // A key is a name, not a path: `a/../b` is its own object, and curl must not make it
        // `b` after the signature covered `a/../b` (refused as SignatureDoesNotMatch, or, for
        // an anonymous store, another object fetched).
        request.pathAsIs = true
        guard let credentials = configuration.credentials else { return request }
        request.headers.removeAll { Self.signatureHeaders.contains($0.name.lowercased()) }
        let given = request.headers.firstIndex { $0.name.lowercased() == "x-amz-content-sha256" }
        let payloadHash = given.map { request.headers.remove(at: $0).value }
            ?? (request.body == nil ? SigV4.emptyPayloadHash : SigV4.unsignedPayload)
        let (host, path, query) = Self.split(request.url)
        let signable = SignableRequest(method: request.method.rawValue, host: host, path: path, query: query,
                                       headers: request.headers, payloadHash: payloadHash)
        let signer = SigV4(credentials: credentials, region: configuration.endpoint.region)
        request.headers += signer.sign(signable, at: time(nil))
        return request
    }

    /// What `sign` adds besides `X-Amz-Content-SHA256` (which it keeps as the payload hash).
    static let signatureHeaders: Set<String> = ["authorization", "x-amz-date", "x-amz-security-token"]

    /// `request` signed again for now when it is an `s3://` request (see `sign`).
    static func resigned(_ request: HTTPRequest, by object: S3Object?) -> HTTPRequest {
        object.map { $0.sign(request) } ?? request
    }

    /// Host, path and decoded query of a URL that `url(key:query:)` made (so encoded exactly as
    /// the signature needs).
    static func split(_ url: String) -> (host: String, path: String, query: [(name: String, value: String)]) {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? url[...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
        let rest = afterScheme.dropFirst(authority.count)
        let path = rest.prefix { $0 != "?" }
        let queryText = rest.dropFirst(path.count + 1)
        let query: [(name: String, value: String)] = queryText.isEmpty ? [] : queryText.split(separator: "&").map { pair in
            let name = pair.prefix { $0 != "=" }
            let value = pair.dropFirst(name.count + 1)
            return (URIEncoding.decode(String(name)) ?? String(name), URIEncoding.decode(String(value)) ?? String(value))
        }
        return (String(authority), path.isEmpty ? "/" : String(path), query)
    }
}
