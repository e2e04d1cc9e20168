/// How an entry talks to its server beyond plain HTTP: trust, redirects, credentials.
///
/// Set under `defaults:` or per entry like the other settings, except `insecure`, which only an
/// entry may set (it turns certificate checks off for that entry alone).
public struct NetworkSettings: Sendable, Equatable {
    /// `ca_cert:` resolved against the manifest's folder: a PEM file of certificates trusted
    /// in addition to the system's (nil: the system's alone).
    public var caCertificate: String?
    /// `ca_cert:` as written, for messages.
    public var caCertificateWritten: String?
    /// `insecure: true`: no certificate or host name checks for this entry (default false).
    public var insecure: Bool
    /// `trusted_redirects: true`: credential headers follow a redirect to another origin
    /// (default false: they are sent only to the origin of the manifest's URL).
    public var trustedRedirects: Bool
    /// `max_redirects:` redirects followed at most (default 10; 0 follows none).
    public var maxRedirects: Int
    /// `allow_insecure_redirects: true`: an https URL may redirect to http (default false).
    public var allowInsecureRedirects: Bool
    /// `netrc: true`: credentials for a host without any in its URL come from `~/.netrc`
    /// (or the file `NETRC` names); default false.
    public var netrc: Bool

    /// The built-in defaults: verify, follow up to 10 redirects, credentials stay at their origin.
    public init(caCertificate: String? = nil, caCertificateWritten: String? = nil, insecure: Bool = false,
                trustedRedirects: Bool = false, maxRedirects: Int = 10, allowInsecureRedirects: Bool = false,
                netrc: Bool = false) {
        self.caCertificate = caCertificate
        self.caCertificateWritten = caCertificateWritten
        self.insecure = insecure
        self.trustedRedirects = trustedRedirects
        self.maxRedirects = maxRedirects
        self.allowInsecureRedirects = allowInsecureRedirects
        self.netrc = netrc
    }
}
