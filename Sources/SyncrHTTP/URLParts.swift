import CCurl

/// A URL taken apart by libcurl's own parser (`curl_url`), so that what syncr decides about a
/// URL (its origin, its credentials) is about the URL curl will actually request.
struct URLParts: Sendable, Equatable {
    /// Lowercased scheme, e.g. `https`.
    var scheme: String
    /// Lowercased host name or address (IPv6 in brackets, as curl gives it).
    var host: String
    /// The port, the scheme's default filled in.
    var port: Int
    var user: String?
    var password: String?
    /// Path, from the first `/`.
    var path: String
    /// The whole URL as curl normalizes it.
    var normalized: String

    /// Where credentials written for a URL may go: scheme, host and port (RFC 6454), with
    /// default ports made explicit so that `https://h/` and `https://h:443/` are one origin.
    var origin: String { "\(scheme)://\(host):\(port)" }

    /// Scheme, host, port (when not the default) and path: what a message may show of a URL
    /// that came from a server. No credentials, no query (presigned URLs carry tokens there).
    var display: String {
        let defaultPort = (scheme == "https" && port == 443) || (scheme == "http" && port == 80)
        return "\(scheme)://\(host)\(defaultPort ? "" : ":\(port)")\(path)"
    }

    /// Parses an absolute URL of any scheme; nil when curl cannot.
    init?(_ url: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, syncr_curlu_non_support_scheme()) == CURLUE_OK,
              let scheme = Self.part(handle, CURLUPART_SCHEME),
              let host = Self.part(handle, CURLUPART_HOST),
              let port = Self.part(handle, CURLUPART_PORT, flags: syncr_curlu_default_port()).flatMap({ Int($0) }),
              let normalized = Self.part(handle, CURLUPART_URL)
        else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
        self.user = Self.part(handle, CURLUPART_USER)
        self.password = Self.part(handle, CURLUPART_PASSWORD)
        self.path = Self.part(handle, CURLUPART_PATH) ?? "/"
        self.normalized = normalized
    }

    /// `url` with its user information replaced by `user` and `password` (nil removes them).
    static func replacingCredentials(in url: String, user: String?, password: String?) -> String {
        guard let handle = curl_url() else { return url }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, syncr_curlu_non_support_scheme()) == CURLUE_OK else { return url }
        curl_url_set(handle, CURLUPART_USER, user, 0)
        curl_url_set(handle, CURLUPART_PASSWORD, user == nil ? nil : password, 0)
        return part(handle, CURLUPART_URL) ?? url
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32 = 0) -> String? {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        guard curl_url_get(handle, which, &pointer, flags) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }
}
