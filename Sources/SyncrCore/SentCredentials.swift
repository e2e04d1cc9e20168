/// Where the credentials of a request that the server refused (401, 403) came from, never
/// their values: the message words its hint from this, so that it names what the entry sent
/// (or why nothing went) instead of listing every place credentials could be set.
public struct SentCredentials: Sendable, Equatable {
    /// The entry's headers that carry credentials, by name as written (`Authorization`,
    /// `X-Api-Key`).
    public var headers: [String]
    /// Whether the URL carries user information (`user:password@`, a lone `token@`) that went
    /// as Basic credentials; false when an `Authorization` header replaced it.
    public var inURL: Bool
    /// With `netrc: true`, what the netrc file holds for the URL's host; nil without it, or
    /// when curl did not read it (the URL has a password, or an `Authorization` header is set).
    public var netrc: NetrcMatch?
    /// Whether redirects took the request to another origin, where none of these were sent
    /// (the entry has no `trusted_redirects: true`): that server refused a request without them.
    /// False when the entry's own request would have carried none either (`netrc: true` with
    /// no machine for its host): then nothing was withheld.
    public var withheldByRedirect: Bool

    /// Creates the facts of what a request carried.
    public init(headers: [String] = [], inURL: Bool = false, netrc: NetrcMatch? = nil, withheldByRedirect: Bool = false) {
        self.headers = headers
        self.inURL = inURL
        self.netrc = netrc
        self.withheldByRedirect = withheldByRedirect
    }

    /// Whether any credentials went with the request.
    public var anySent: Bool {
        !headers.isEmpty || inURL || netrc?.supplied == true
    }
}

/// What a netrc file holds for a host, as curl reads it (`machine` names matched without
/// regard to case, the first `machine` or `default` that fits wins, `#` starts a comment line).
/// `file` is the path that was read (`NETRC`, else `~/.netrc`).
public enum NetrcMatch: Sendable, Equatable {
    /// A `machine` line names the host; `password` is false when it gives none (curl then sends
    /// an empty one).
    case machine(file: String, host: String, password: Bool)
    /// No `machine` names the host, and the `default` entry applies.
    case defaultEntry(file: String, password: Bool)
    /// No `machine` names the host and there is no `default`: curl sends nothing.
    case noMachine(file: String, host: String)
    /// The file cannot be opened or read (`errno`): curl sends nothing.
    case unreadable(file: String, errno: Int32)
    /// The file breaks netrc's syntax at `line` (1-based) in the way `problem` says: curl
    /// stops reading it there.
    case malformed(file: String, line: Int, problem: String)

    /// Whether credentials from the file went with the request.
    public var supplied: Bool {
        switch self {
        case .machine, .defaultEntry: return true
        case .noMachine, .unreadable, .malformed: return false
        }
    }

    /// The file that was read.
    public var file: String {
        switch self {
        case .machine(let file, _, _), .defaultEntry(let file, _), .noMachine(let file, _), .unreadable(let file, _),
             .malformed(let file, _, _):
            return file
        }
    }
}

extension SentCredentials {
    /// These facts with the netrc file's name and the host masked as every text is: the host
    /// is the expanded URL's, and a `${VAR}` may have given it (the hint said "no machine for
    /// artifacts.corp.internal" where every other text showed the reference masked).
    func scrubbed(_ redactor: Redactor) -> SentCredentials {
        var copy = self
        copy.netrc = netrc.map { $0.scrubbed(redactor) }
        return copy
    }
}

extension NetrcMatch {
    func scrubbed(_ redactor: Redactor) -> NetrcMatch {
        let s = redactor.scrub
        switch self {
        case .machine(let file, let host, let password): return .machine(file: s(file), host: s(host), password: password)
        case .defaultEntry(let file, let password): return .defaultEntry(file: s(file), password: password)
        case .noMachine(let file, let host): return .noMachine(file: s(file), host: s(host))
        case .unreadable(let file, let errno): return .unreadable(file: s(file), errno: errno)
        case .malformed(let file, let line, let problem): return .malformed(file: s(file), line: line, problem: s(problem))
        }
    }
}
