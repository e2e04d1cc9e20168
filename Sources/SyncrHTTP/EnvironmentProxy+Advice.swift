/// What to say when the proxy from the environment answered in the server's stead, or cannot
/// be used: the variable to change and how. Such an answer does not change by asking again
/// (`TransferError.proxy` is not retried), so the message must say what will. Like `hint`,
/// these name the proxy's address only, never its URL, which may carry a password.
extension EnvironmentProxy {
    /// `host:port`, an IPv6 address in brackets.
    public var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The proxy asked for credentials: a 407 (RFC 9110 §15.5.8), which only a proxy sends.
    /// `sentCredentials`: its URL carries a `user:password@`, which curl sent and it did not take.
    func credentialsAdvice(sentCredentials: Bool) -> String {
        // No example URL with a password in it: the run's masking would print it as `***`.
        let what = sentCredentials ? "and it did not take the user:password@ in it: check them"
            : "and it asks for credentials: write them into \(variable) as user:password@ before the host"
        return "\(endpoint) is the proxy set in \(variable), \(what) (any @ : / in them percent-encoded), "
            + "or list this server's host in no_proxy to connect to it directly"
    }

    /// The proxy would not open a tunnel to `target` (`host:port`): its answer to the CONNECT
    /// was a 4xx other than 407, its rules refuse that server.
    func refusalAdvice(target: String) -> String {
        "\(endpoint) is the proxy set in \(variable), and it refused to connect to \(target): "
            + "ask whoever runs the proxy to allow that server, or list its host in no_proxy to connect to it directly"
    }

    /// The TLS handshake with an `https://` proxy failed (`detail`: curl's message): its
    /// certificate is not trusted here, or it does not speak TLS on that port. The manifest's
    /// `ca_cert:` is for servers, and curl checks the proxy against the system's CAs.
    func tlsAdvice(detail: String) -> String {
        "TLS handshake with the proxy failed: \(detail); \(endpoint) is the https proxy set in \(variable): "
            + "if it speaks plain HTTP, write its URL with http://; if its certificate is not trusted, add its CA "
            + "to the system's CA certificates (ca_cert: is for servers), or list this server's host in no_proxy "
            + "to connect to it directly"
    }

    /// The proxy did not answer as the kind its URL's scheme names (a SOCKS version, or a
    /// SOCKS authentication curl does not speak).
    var kindAdvice: String {
        "\(endpoint), the proxy set in \(variable), did not answer as a \(scheme) proxy: check the scheme in "
            + "\(variable) (http://, https://, socks4://, socks5://, socks5h://) and its port"
    }

    /// The proxy could not be used at all: curl could not resolve its name, or could not read
    /// its URL (`detail`: curl's message, quoted only when it names a host and not the URL,
    /// which may carry a password).
    static func unusableAdvice(variable: String, detail: String) -> String {
        if detail.hasPrefix("Could not resolve proxy") {
            return "\(detail), the proxy set in \(variable): correct the host name in \(variable), "
                + "or list this server's host in no_proxy (or unset \(variable)) to connect to it directly"
        }
        return "curl cannot read the proxy URL set in \(variable): write it as http://host:port "
            + "(with user:password@ before the host if the proxy asks for credentials), "
            + "or list this server's host in no_proxy (or unset \(variable)) to connect to it directly"
    }
}
