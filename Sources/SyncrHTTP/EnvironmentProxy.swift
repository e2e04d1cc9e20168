#if canImport(Glibc)
import Glibc
#endif

/// A proxy from the environment, as an error names it: the variable it came from and its
/// address, never its URL, which may carry a password. curl's own messages name only an
/// address ("Failed to connect to 10.0.0.5 port 3128"), which a user who set `https_proxy` in a
/// profile long ago does not recognise as the proxy.
public struct EnvironmentProxy: Sendable, Equatable {
    /// The variable it came from, e.g. `https_proxy`.
    public var variable: String
    /// Lowercased host name or address, without brackets.
    public var host: String
    public var port: Int
    /// What kind of proxy it is, by its URL's scheme: `http` (also when none is written),
    /// `https`, `socks4`, `socks4a`, `socks5` or `socks5h`.
    public var scheme: String

    /// - Parameters:
    ///   - variable: the variable it came from.
    ///   - host: its host name or address, without brackets.
    ///   - port: its port.
    ///   - scheme: the scheme of its URL, `http` when none is written.
    public init(variable: String, host: String, port: Int, scheme: String = "http") {
        self.variable = variable
        self.host = host
        self.port = port
        self.scheme = scheme
    }

    /// The proxy written as `written` in `variable`; nil when its address cannot be read.
    init?(variable: String, written: String) {
        guard let (host, port) = Self.address(written) else { return nil }
        self.init(variable: variable, host: host, port: port, scheme: Self.scheme(written))
    }

    /// Whether it is an HTTP proxy (`http://` or `https://`), which takes a plain-http request
    /// whole and answers it, where a SOCKS proxy only relays the bytes.
    public var forwardsRequests: Bool { scheme == "http" || scheme == "https" }

    /// The scheme a proxy URL is written with, lowercased; `http` when none is, as curl takes it.
    static func scheme(_ written: String) -> String {
        guard let separator = written.range(of: "://") else { return "http" }
        return written[..<separator.lowerBound].filter { $0 != " " && $0 != "\t" }.lowercased()
    }

    /// The proxy for a URL of `scheme`, looked up as libcurl does: `http_proxy` for http
    /// (lowercase only: a CGI program's `HTTP_PROXY` may come from a request header), else
    /// `<scheme>_proxy` then its uppercase, then `all_proxy` and `ALL_PROXY`. `no_proxy` is not
    /// read here: a request's own proxy is `ProxyEnvironment.route(for:)`'s.
    /// - Parameter environment: a variable's value (`getenv` by default), nil when unset.
    init?(scheme: String, environment: (String) -> String? = EnvironmentProxy.variable) {
        guard let (variable, value) = Self.setting(scheme: scheme, environment: environment) else { return nil }
        self.init(variable: variable, written: value)
    }

    /// The variable libcurl takes the proxy for a URL of `scheme` from, and its value as
    /// written (it may carry a password: never print it); nil when none is set.
    static func setting(scheme: String, environment: (String) -> String? = EnvironmentProxy.variable)
        -> (variable: String, value: String)? {
        let scheme = scheme.lowercased()
        let own = scheme + "_proxy"
        let names = scheme == "http" ? [own] : [own, own.uppercased()]
        for name in names + ["all_proxy", "ALL_PROXY"] {
            if let value = environment(name), !value.isEmpty { return (name, value) }
        }
        return nil
    }

    /// A variable of the process's environment, nil when unset.
    static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Host and port of a proxy written as `[scheme://][user[:password]@]host[:port][/]`. With
    /// no port, libcurl's defaults: 443 for an `https://` proxy, 1080 for any other.
    static func address(_ written: String) -> (host: String, port: Int)? {
        var rest = Substring(written.filter { $0 != " " && $0 != "\t" })
        var scheme = ""
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        }
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = rest
        var port = scheme == "https" ? 443 : 1080
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { guard let p = Int(after.dropFirst()) else { return nil }; port = p }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty else { return nil }
        return (host.lowercased(), port)
    }

    /// What to add to curl's message for a connection to this proxy that was refused or not
    /// made in time: curl's words name only an address ("Failed to connect to 10.0.0.5 port
    /// 3128"), or none. Names the variable and the address only: a proxy URL may carry a password.
    var unreachableHint: String {
        "\(endpoint) is the proxy set in \(variable): check that it runs there, "
            + "or list this server's host in no_proxy to connect to it directly"
    }

    /// What to add to curl's message for a timeout after this proxy took the connection: it
    /// did not open the tunnel, finish its SOCKS handshake, or answer the request it was
    /// handed in time, waiting on `target` (`host:port`) or slow itself.
    func unansweredHint(target: String) -> String {
        "\(endpoint) is the proxy set in \(variable), which took the connection and gave no answer in time: "
            + "check that it can reach \(target), or list this server's host in no_proxy to connect to it directly"
    }
}
