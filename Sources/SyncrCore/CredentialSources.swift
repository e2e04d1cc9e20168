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
    /// Whether the entry has headers that a redirect to another origin leaves behind: those
    /// named as credentials, and those whose values come from `${VAR}` (`RedirectPolicy`).
    let headersToWithhold: Bool

    init(url: String, settings: Settings) {
        self.url = url
        headers = settings.headers.filter(\.carriesCredentials).map(\.name)
        netrc = settings.network.netrc
        headersToWithhold = settings.headers.contains { $0.carriesCredentials || $0.value.hasReferences }
    }

    /// What went with the entry's requests: the netrc file is read now, as curl read it.
    /// `withheld`: redirects took the refused request to another origin, without them; said
    /// only when the entry's own request would have carried some. The HTTP layer counts
    /// `netrc: true` as credentials whatever the file holds (it does not read it): one with
    /// no machine for the entry's host, and no default, would have sent nothing either.
    func sent(withheld: Bool = false) -> SentCredentials {
        let left = SentCredentials(headers: headers, withheldByRedirect: true)
        if withheld, headersToWithhold || URLAuthority(url)?.hasUser == true { return left }
        let own = self.own
        return withheld && own.anySent ? left : own
    }

    /// What went with a request to the entry's own origin.
    private var own: SentCredentials {
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
