#if canImport(Glibc)
import Glibc
#endif
import SyncrManifest

/// The passwords of the proxies libcurl takes from the environment (`http_proxy`,
/// `https_proxy`, `all_proxy` and their upper-case forms): curl sends them to the proxy as
/// `Proxy-Authorization: Basic base64(user:password)`, and a proxy or server that echoes the
/// request in an error page would have them printed.
enum ProxySecrets {
    static let variables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]

    /// The password (as written and percent-decoded) and the `Basic` credentials of each proxy
    /// URL that carries user information.
    /// - Parameter environment: a variable's value, nil when unset.
    static func passwords(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> [String] {
        variables.compactMap(environment).flatMap { value in
            // A proxy may be written without a scheme (`user:pw@host:3128`), as curl takes it.
            URLCredentials.secrets(in: value.contains("://") ? value : "http://" + value)
        }
    }
}
