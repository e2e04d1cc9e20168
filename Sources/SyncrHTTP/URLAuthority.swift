/// What a URL tells about the credentials curl sends with it, read by curl's own parser: the
/// host a netrc `machine` must name, and whether the URL carries user information itself (curl
/// then sends that, and reads netrc only for a URL without a password).
public struct URLAuthority: Sendable, Equatable {
    /// The host name or address, lowercased, as curl matches it against netrc machines.
    public let host: String
    /// Whether the URL names a user (`user@`, `user:password@`, or a lone `token@`).
    public let hasUser: Bool
    /// Whether the URL carries a password (`user:password@`).
    public let hasPassword: Bool

    /// Reads `url` (expanded, as sent); nil when curl cannot parse it.
    public init?(_ url: String) {
        guard let parts = URLParts(url) else { return nil }
        host = parts.host
        hasUser = !(parts.user ?? "").isEmpty
        hasPassword = parts.password != nil
    }
}
