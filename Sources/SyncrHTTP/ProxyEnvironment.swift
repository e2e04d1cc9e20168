#if canImport(Glibc)
import Glibc
#endif
import CCurl

/// The proxy variables of an environment, and the proxy each request goes through.
///
/// syncr chooses the proxy of every request itself, by libcurl's rules, and hands curl that
/// choice (`CURLOPT_PROXY`, an empty one for none) instead of letting curl read the
/// environment: the transfer then knows which proxy it used, and an answer or a failure can
/// say so (`TransferError.status`'s `proxy`, `TransferError.proxy`) without the message
/// reading the environment again. curl 7.88 cannot tell which proxy it used
/// (`CURLINFO_USED_PROXY` came in 8.7).
///
/// Made once per engine (`TransferEngine.Configuration.proxies`: a session's run reads the
/// environment once), with everything a request's choice needs worked out: the variable and
/// proxy for http and for https, and `no_proxy` split and parsed. A request then parses only
/// its own URL, and only when some proxy is set.
public struct ProxyEnvironment: Sendable, Equatable {
    /// The variables libcurl reads, in the order it reads them for a URL.
    static let names = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

    /// Each of `names` that is set and not empty (libcurl takes an empty one as unset).
    private let values: [String: String]
    /// The route of an http and of an https request, nil where no variable names a proxy.
    private let http: ProxyRoute?
    private let https: ProxyRoute?
    /// `no_proxy`, else `NO_PROXY`, as libcurl reads them.
    let noProxy: NoProxyList

    /// The variables as `lookup` gives them (nil when unset).
    public init(_ lookup: (String) -> String?) {
        var values: [String: String] = [:]
        for name in Self.names {
            if let value = lookup(name), !value.isEmpty { values[name] = value }
        }
        self.values = values
        http = Self.route(scheme: "http", values)
        https = Self.route(scheme: "https", values)
        noProxy = NoProxyList(values["no_proxy"] ?? values["NO_PROXY"] ?? "")
    }

    /// The process's environment, read now.
    public static var process: ProxyEnvironment {
        ProxyEnvironment(EnvironmentProxy.variable)
    }

    /// No proxy for any request.
    public static let none = ProxyEnvironment { _ in nil }

    /// The proxy a request to `url` goes through; nil when it goes directly: no variable names
    /// one for its scheme, or `no_proxy` (else `NO_PROXY`) lists its host.
    func route(for url: String) -> ProxyRoute? {
        // Most runs set no proxy variable: then no URL need be parsed (once per request). Any
        // scheme's proxy is http's, https's or all_proxy, which both of those fall back to.
        guard http != nil || https != nil, let parts = URLParts(url) else { return nil }
        let route = switch parts.scheme {
        case "http": http
        case "https": https
        default: Self.route(scheme: parts.scheme, values)
        }
        guard let route, !noProxy.exempts(host: parts.host) else { return nil }
        return route
    }

    /// The proxy the variables name for a URL of `scheme`, before `no_proxy` is asked.
    private static func route(scheme: String, _ values: [String: String]) -> ProxyRoute? {
        guard let (variable, written) = EnvironmentProxy.setting(scheme: scheme, environment: { values[$0] }) else { return nil }
        return ProxyRoute(variable: variable, written: written, proxy: EnvironmentProxy(variable: variable, written: written))
    }
}

/// The proxy one request goes through, as `ProxyEnvironment.route(for:)` chose it.
struct ProxyRoute: Sendable, Equatable {
    /// The variable it came from.
    var variable: String
    /// Its URL as written, for curl only: it may carry a password.
    var written: String
    /// Its address, nil when curl will not be able to read the URL either (it then fails with
    /// `CURLE_COULDNT_RESOLVE_PROXY`, worded by `EnvironmentProxy.unusableAdvice`).
    var proxy: EnvironmentProxy?

    /// The proxy that may have answered a request in the server's stead: an HTTP(S) proxy is
    /// sent a plain-http request whole and answers it (RFC 9110 §7.6), while an https request
    /// goes through a tunnel (CONNECT) and a SOCKS proxy only relays bytes, so that the answer
    /// is the server's. Nil when the answer is the server's.
    func forwarder(scheme: String) -> EnvironmentProxy? {
        guard scheme == "http", let proxy, proxy.forwardsRequests else { return nil }
        return proxy
    }
}

extension ProxyRoute: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The variable and the proxy's address, never `written`: interpolated into a message or
    /// a log by mistake, a route must not carry the proxy's password along.
    var description: String { "\(variable) (\(proxy.map { "\($0.host):\($0.port)" } ?? "unreadable URL"))" }
    var debugDescription: String { description }
    /// `dump` shows the description only: `written` is left out.
    var customMirror: Mirror { Mirror(self, children: ["route": description], displayStyle: .struct) }
}

/// The variables a proxy environment holds, by name, never their values (`http_proxy` may
/// carry a password): an engine keeps one in its `configuration`, and `dump(session)` or
/// `print(engine.configuration)` showed `http://user:password@proxy`.
extension ProxyEnvironment: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `ProxyEnvironment(http_proxy, no_proxy)`: the names set.
    public var description: String {
        "ProxyEnvironment(\(Self.names.filter { values[$0] != nil }.joined(separator: ", ")))"
    }

    /// The same as `description`.
    public var debugDescription: String { description }

    /// The names set, and each route as its description shows it.
    public var customMirror: Mirror {
        Mirror(self, children: ["set": Self.names.filter { values[$0] != nil },
                                "http": http?.description as Any, "https": https?.description as Any],
               displayStyle: .struct)
    }
}
