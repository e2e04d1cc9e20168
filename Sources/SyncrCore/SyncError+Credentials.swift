#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP

extension SyncError {
    /// curl refused the netrc file `file` (`error`, a `TransferError.unreadableNetrc`) and
    /// said only ".netrc parser error": the file is read again here to say where
    /// (`FILE:LINE`) and what to change. Never a token of the file: the quoted value is most
    /// likely a password.
    static func unreadableNetrc(_ error: TransferError, file: String, retries: Retries) -> SyncError {
        guard let line = NetrcLookup.unclosedQuote(in: file) else {
            return .transferIO(path: file, errno: EINVAL, message: TransferError.unreadableNetrcText(error), retries: retries)
        }
        return .transferIO(path: "\(file):\(line)", errno: EINVAL, message: "unclosed quote in netrc: a value there "
            + "starts with a quote that its line does not close, and curl then reads none of the file (netrc: true is set): "
            + "end the value with a quote on the same line (a quote inside it written \\\"), or write it without quotes",
            retries: retries)
    }

    /// What to do after a 401 or 403, worded from what the entry sent: the sources the server
    /// refused, or why nothing went (a netrc file with no machine for the host). Never a value.
    /// Without the parentheses it goes in (after a proxy's part, when one forwarded the request).
    static func credentialsAdvice(status: Int, sent: SentCredentials?) -> String {
        // Not known (an error made by a library caller): every place an entry carries them.
        guard let sent else {
            return "check the credentials: the entry's headers:, a user:password in its URL, or netrc: true"
        }
        if sent.withheldByRedirect {
            return "redirects took the request to another origin, where the entry's credentials are not sent: "
                + "set trusted_redirects: true on the entry if that server is to have them"
        }
        let sources = sentSources(sent)
        let netrcNote = sent.netrc.flatMap(netrcProblem)
        guard !sources.isEmpty else {
            if let netrcNote { return netrcNote }
            let add = "add headers:, user:password@ in the URL, or netrc: true"
            return status == 401 ? "no credentials were sent: \(add)"
                : "no credentials were sent; if the URL needs some, \(add)"
        }
        let from = sources.joined(separator: " and ")
        let refused = status == 401 ? "the server refused the credentials from \(from): check them"
            : "the server refused access with the credentials from \(from): check them, and that they may reach this URL"
        return refused + (netrcNote.map { "; \($0)" } ?? "")
    }

    /// Where the credentials that went came from, as the manifest and the netrc file name them.
    private static func sentSources(_ sent: SentCredentials) -> [String] {
        var sources: [String] = []
        if !sent.headers.isEmpty {
            let names = sent.headers.joined(separator: ", ")
            sources.append("the entry's \(names) header" + (sent.headers.count == 1 ? "" : "s"))
        }
        if sent.inURL { sources.append("the user information in its URL") }
        switch sent.netrc {
        case .machine(let file, let host, let password)?:
            sources.append("\(file) (machine \(host)" + (password ? ")" : ", which gives no password: add one)"))
        case .defaultEntry(let file, let password)?:
            sources.append("\(file) (its default entry" + (password ? ")" : ", which gives no password: add one)"))
        default:
            break
        }
        return sources
    }

    /// Why `netrc: true` sent nothing, and what to change; nil when the file gave credentials.
    private static func netrcProblem(_ match: NetrcMatch) -> String? {
        switch match {
        case .machine, .defaultEntry:
            return nil
        case .noMachine(let file, let host):
            return "netrc: true is set but \(file) has no machine for \(host) and no default: add one"
        case .unreadable(let file, let errno):
            return "netrc: true is set but \(file) cannot be read (\(String(cString: strerror(errno)))): "
                + "create it, or set NETRC to the netrc file"
        case .malformed(let file, let line, let problem):
            return "netrc: true is set but \(file) cannot be read as a netrc file (line \(line): \(problem)): fix it"
        }
    }
}
