#if canImport(Glibc)
import Glibc
#endif

/// The proxy libcurl takes from the environment for a URL, named when it cannot be reached:
/// curl's own message names only an address ("Failed to connect to 10.0.0.5 port 3128"), which
/// a user who set `https_proxy` in a profile long ago does not recognise as the proxy.
struct EnvironmentProxy: Sendable, Equatable {
    /// The variable it came from, e.g. `https_proxy`.
    var variable: String
    /// Lowercased host name or address, without brackets.
    var host: String
    var port: Int

    init(variable: String, host: String, port: Int) {
        self.variable = variable
        self.host = host
        self.port = port
    }

    /// The proxy for a URL of `scheme`, looked up as libcurl does: `http_proxy` for http
    /// (lowercase only: a CGI program's `HTTP_PROXY` may come from a request header), else
    /// `<scheme>_proxy` then its uppercase, then `all_proxy` and `ALL_PROXY`. `no_proxy` is not
    /// read: `hint` names the proxy only when curl's message shows its address.
    /// - Parameter environment: a variable's value (`getenv` by default), nil when unset.
    init?(scheme: String, environment: (String) -> String? = EnvironmentProxy.variable) {
        guard let (variable, value) = Self.setting(scheme: scheme, environment: environment),
              let (host, port) = Self.address(value) else { return nil }
        self.variable = variable
        self.host = host
        self.port = port
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

    /// What to add to curl's message (`detail`) for a connection that failed or timed out,
    /// when the address it names is this proxy's and not the server's own (`target`); nil
    /// otherwise. Names the variable and the address only: a proxy URL may carry a password.
    func hint(detail: String, targetHost: String, targetPort: Int) -> String? {
        let target = targetHost.filter { $0 != "[" && $0 != "]" }.lowercased()
        let named = "to \(host) port \(port)"
        let said = detail.lowercased()
        guard target != host || targetPort != port,
              said.contains(named + " ") || said.contains(named + ":") || said.hasSuffix(named) else { return nil }
        return "\(host):\(port) is the proxy set in \(variable): check that it runs there, "
            + "or list this server's host in no_proxy to connect to it directly"
    }
}
