/// Which redirects a request follows, and what it takes along.
///
/// syncr follows redirects itself rather than letting curl do it, so that each hop is checked
/// (in the spirit of async-http-client's `RedirectState`):
/// - only `http` and `https` targets; `https` to `http` only with `allowInsecureRedirects`;
/// - at most `maxRedirects` hops (0 follows none), and a URL seen before in the chain is a loop;
/// - credentials (`Authorization`, `Cookie`, `Proxy-Authorization`, `X-Amz-Security-Token`, the headers named in
///   `HTTPRequest.credentialHeaders`, and the URL's `user:password`) go only to the origin
///   (scheme, host, port) of the URL they were written for, unless `trustedRedirects`;
/// - a request with a body (an upload) is re-sent with its method and body on 307 and 308 only,
///   and to another origin only with `trustedRedirects`; 303 is its answer (the server took
///   the upload and points at a result, which syncr has no use for: fetched, its failure would
///   fail an upload that arrived); 301 and 302 are refused, since following them as a GET
///   would report an upload that never arrived as a success.
public struct RedirectPolicy: Sendable, Equatable {
    /// Redirects followed at most; 0 follows none (a redirect is then an error).
    public var maxRedirects: Int
    /// Credentials follow a redirect to another origin.
    public var trustedRedirects: Bool
    /// An `https` URL may redirect to `http`.
    public var allowInsecureRedirects: Bool

    public init(maxRedirects: Int = 10, trustedRedirects: Bool = false, allowInsecureRedirects: Bool = false) {
        self.maxRedirects = maxRedirects
        self.trustedRedirects = trustedRedirects
        self.allowInsecureRedirects = allowInsecureRedirects
    }

    /// Header names that always carry credentials (lowercased). An object store's session
    /// token (`X-Amz-Security-Token`, signed into every request made with temporary
    /// credentials) is one: it signs nothing alone, but with a leaked key it does.
    static let credentialHeaderNames: Set<String> = ["authorization", "cookie", "proxy-authorization",
                                                     "x-amz-security-token"]

    /// The statuses that redirect (RFC 9110 §15.4); 300, 304 and 305 are answers in their own right.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
}

/// What to do with a response that may be a redirect.
enum RedirectDecision: Sendable {
    /// Not a redirect to follow: the response is the answer.
    case deliver
    /// Send this request next.
    case follow(HTTPRequest)
    /// A redirect that must not be followed.
    case refuse(TransferError)
}

/// The redirect chain of one request: the pure logic of `RedirectPolicy`, hop by hop.
struct RedirectState: Sendable {
    /// The request as the caller made it: its headers and URL credentials are what each hop
    /// starts from, and its URL's origin is the one credentials were written for.
    let original: HTTPRequest
    /// What the chain knows once it has one: made at the first redirect, since parsing the URL
    /// cost 3% of fetching 2000 small files, and almost no request is ever redirected.
    private var chain: Chain?
    /// Redirects followed so far.
    private(set) var hops = 0
    /// Whether the request of the last hop went without the original's credentials (another
    /// origin, without `trusted_redirects`), and it had some to withhold.
    private(set) var credentialsWithheld = false

    private struct Chain {
        let originalParts: URLParts?
        var visited: Set<String>

        init(_ request: HTTPRequest) {
            originalParts = URLParts(request.url)
            visited = [originalParts.map(RedirectState.loopKey) ?? request.url]
        }
    }

    init(_ request: HTTPRequest) {
        original = request
    }

    /// Decides about the answer `status` to `current` (the hop just made), whose `Location`
    /// resolved to `target` (curl's `CURLINFO_REDIRECT_URL`; nil when there is none).
    mutating func next(after current: HTTPRequest, status: Int, target: String?) -> RedirectDecision {
        guard RedirectPolicy.redirectStatuses.contains(status) else { return .deliver }
        // RFC 9110 §15.4.4: the server took the request; the answer to read is elsewhere.
        if status == 303 && current.body != nil { return .deliver }
        // Without a Location there is nowhere to go: the answer is delivered as it is, body and
        // all (S3 says a bucket is in another region so, with its reason in XML).
        guard let target, !target.isEmpty else { return .deliver }
        let policy = original.redirects
        let url = original.displayURL
        let scheme = target.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else {
            return .refuse(.redirect(url: url, message:
                "the server redirects (HTTP \(status)) to a \(scheme): URL; only http and https redirects are followed"))
        }
        guard let parts = URLParts(target) else {
            return .refuse(.redirect(url: url, message: "the server redirects (HTTP \(status)) to a URL that cannot be parsed"))
        }
        guard parts.scheme == "http" || parts.scheme == "https" else {
            return .refuse(.redirect(url: url, message:
                "the server redirects (HTTP \(status)) to a \(parts.scheme): URL; only http and https redirects are followed"))
        }
        if policy.maxRedirects == 0 {
            return .refuse(.redirect(url: url, message:
                "the server redirects (HTTP \(status)) to \(parts.display) and max_redirects is 0; point the URL at the final location, or raise max_redirects"))
        }
        var chain = self.chain ?? Chain(original)
        let from = URLParts(current.url)
        if from?.scheme == "https", parts.scheme == "http", !policy.allowInsecureRedirects {
            return .refuse(.redirect(url: url, message:
                "the server redirects (HTTP \(status)) from https to \(parts.display), which is not encrypted; set allow_insecure_redirects: true on the entry to follow it"))
        }
        guard !chain.visited.contains(Self.loopKey(parts)) else {
            return .refuse(.redirect(url: url, message:
                "redirect loop: \(parts.display) was already visited after \(hops + 1) redirect(s)"))
        }
        guard hops < policy.maxRedirects else {
            return .refuse(.redirect(url: url, message:
                "more than \(policy.maxRedirects) redirect\(policy.maxRedirects == 1 ? "" : "s") (the last to \(parts.display)); raise max_redirects if the chain is expected"))
        }
        let sameOrigin = chain.originalParts.map { $0.origin == parts.origin } ?? false
        let keepCredentials = sameOrigin || policy.trustedRedirects
        credentialsWithheld = !keepCredentials && Self.carriesCredentials(original, parts: chain.originalParts)

        var next = current
        if current.body != nil {
            switch status {
            case 307, 308:
                guard keepCredentials else {
                    return .refuse(.redirect(url: url, message:
                        "the server redirects the upload (HTTP \(status)) to another origin, \(parts.display); syncr sends a body there only with trusted_redirects: true on the entry"))
                }
            default:
                return .refuse(.redirect(url: url, message:
                    "the server answers the upload with HTTP \(status) to \(parts.display); a \(status) may turn the \(current.method.rawValue) into a GET that drops the body, so syncr does not follow it: point to: at the final URL (307 and 308 are followed)"))
            }
        }
        // Credentials are taken from the original request at every hop: stripped while the chain
        // is elsewhere, present again should it come back to their origin.
        next.headers = keepCredentials ? original.headers : original.headers.filter { !original.isCredential($0.name) }
        // A `Host` written for the entry's own server names that server: sent to another, it
        // would ask it for a site it may not have (curl drops it too when the host changes).
        if !sameOrigin { next.headers.removeAll { $0.name.lowercased() == "host" } }
        let user = keepCredentials ? chain.originalParts?.user : nil
        let password = keepCredentials ? chain.originalParts?.password : nil
        next.url = URLParts.replacingCredentials(in: target, user: user, password: password)
        // netrc is a credential too: curl would read it again for every new host.
        next.netrc = keepCredentials && original.netrc
        // `insecure: true` was written for the entry's own server, not for wherever it points.
        next.tls.verify = original.tls.verify || !sameOrigin
        chain.visited.insert(Self.loopKey(parts))
        self.chain = chain
        hops += 1
        return .follow(next)
    }

    /// Whether `request` carries credentials a redirect to another origin drops: a credential
    /// header, user information in its URL (`parts`), or `netrc` (which may hold the host).
    static func carriesCredentials(_ request: HTTPRequest, parts: URLParts?) -> Bool {
        request.netrc || parts?.user != nil || request.headers.contains { request.isCredential($0.name) }
    }

    /// What identifies a URL for loop detection: the normalised URL without user information,
    /// which the manifest's URL may carry and a Location usually does not.
    static func loopKey(_ parts: URLParts) -> String {
        URLParts.replacingCredentials(in: parts.normalized, user: nil, password: nil)
    }
}

extension HTTPRequest {
    /// Whether the header `name` carries credentials (by name, or listed in `credentialHeaders`).
    func isCredential(_ name: String) -> Bool {
        let lower = name.lowercased()
        return RedirectPolicy.credentialHeaderNames.contains(lower) || credentialHeaders.contains(lower)
    }
}
