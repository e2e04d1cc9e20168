import Foundation
import SyncrHTTP
import SyncrManifest

extension HTTPRequest {
    /// This request with an entry's trust, redirect and credential settings applied: `ca_cert`
    /// (and `SSL_CERT_FILE`) as extra trusted CAs, `insecure`, the redirect policy, `netrc`, and
    /// the headers whose values came from `${ENV}`, or whose names carry credentials
    /// (`Header.carriesCredentials`), marked as credentials.
    func using(_ settings: Settings) -> HTTPRequest {
        var request = self
        let network = settings.network
        request.redirects = RedirectPolicy(maxRedirects: network.maxRedirects,
                                           trustedRedirects: network.trustedRedirects,
                                           allowInsecureRedirects: network.allowInsecureRedirects)
        request.credentialHeaders = Set(settings.headers.filter { $0.value.hasReferences || $0.carriesCredentials }
            .map { $0.name.lowercased() })
        var anchors: [String] = []
        if let file = network.caCertificate { anchors.append(file) }
        if let file = NetworkEnvironment.certificateFile, !anchors.contains(file) { anchors.append(file) }
        request.tls = TLSOptions(verify: !network.insecure, extraAnchors: anchors)
        request.netrc = network.netrc
        request.netrcFile = NetworkEnvironment.netrcFile
        return request
    }
}

/// What the environment says about trust and credentials, read once per run.
enum NetworkEnvironment {
    /// `SSL_CERT_FILE`: a PEM file trusted in addition to the system's CAs, as OpenSSL-based
    /// tools treat it (libcurl itself ignores it once it has a bundle of its own). A file that
    /// does not exist is ignored, as OpenSSL ignores it.
    static let certificateFile: String? = {
        guard let path = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !path.isEmpty,
              FileManager.default.isReadableFile(atPath: path) else { return nil }
        return path
    }()

    /// `NETRC`: the netrc file to read with `netrc: true` instead of `~/.netrc`.
    static let netrcFile: String? = {
        guard let path = ProcessInfo.processInfo.environment["NETRC"], !path.isEmpty else { return nil }
        return path
    }()
}
