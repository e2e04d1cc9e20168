import SyncrHTTP
import SyncrManifest

/// Where an entry's requests carry credentials, as its settings put them. The netrc file is
/// read (`sent`) only once a server refused a request with 401 or 403, for the message.
struct CredentialSources: Sendable {
    /// The entry's headers that carry credentials by name (`Header.carriesCredentials`).
    let headers: [String]
    /// The entry's URL, expanded (as sent): its user information and host.
    let url: String
    /// `netrc: true`.
    let netrc: Bool

    init(url: String, settings: Settings) {
        self.url = url
        headers = settings.headers.filter(\.carriesCredentials).map(\.name)
        netrc = settings.network.netrc
    }

    /// What went with the entry's requests: the netrc file is read now, as curl read it.
    /// `withheld`: redirects took the refused request to another origin, without them.
    func sent(withheld: Bool = false) -> SentCredentials {
        if withheld { return SentCredentials(headers: headers, withheldByRedirect: true) }
        // curl adds no Authorization of its own (from the URL or netrc) to a request that has one.
        if headers.contains(where: { $0.lowercased() == "authorization" }) { return SentCredentials(headers: headers) }
        let authority = URLAuthority(url)
        var match: NetrcMatch?
        // CURL_NETRC_OPTIONAL: a password in the URL is preferred, and the file is not read.
        if netrc, let authority, !authority.hasPassword {
            match = NetrcLookup.match(host: authority.host, in: NetrcSecrets.path)
        }
        return SentCredentials(headers: headers, inURL: authority?.hasUser ?? false, netrc: match)
    }
}
