import Foundation

/// What the netrc file gives curl for a host, found as curl finds it, for the message after a
/// 401 or 403: curl reads the file itself and says nothing when it holds no machine for the
/// host, so without this the operator is told to set `netrc: true` that is set.
enum NetrcLookup {
    /// What `path` holds for `host` (lowercased, as `URLAuthority` gives it).
    static func match(host: String, in path: String) -> NetrcMatch {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .unreadable(file: path, errno: errno) }
        defer { close(fd) }
        // A folder opens too (a NETRC=/home/me/ typo), and curl reads nothing from it.
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR else { return .unreadable(file: path, errno: EISDIR) }
        guard let bytes = FS.readAll(path) else { return .unreadable(file: path, errno: EIO) }
        return match(host: host, in: bytes, file: path)
    }

    /// The line (1-based) of the first quoted value in `path` with no closing quote on its
    /// line, which makes curl refuse the whole file; nil when there is none, or the file
    /// cannot be read. curl reads the file up to the entry it needs, so a request it failed
    /// for the file's syntax met the first such quote.
    static func unclosedQuote(in path: String) -> Int? {
        guard let bytes = FS.readAll(path) else { return nil }
        var tokens = NetrcTokens(bytes)
        while tokens.unterminatedQuote == nil, let token = tokens.next() {
            if tokens.startsLine, token.first == UInt8(ascii: "#") { tokens.skipLine(); continue }
            if String(decoding: token, as: UTF8.self).lowercased() == "macdef" { tokens.skipMacro() }
        }
        return tokens.unterminatedQuote
    }

    /// What the netrc text `bytes` holds for `host`; `file` names it in the answer.
    static func match(host: String, in bytes: [UInt8], file: String) -> NetrcMatch {
        var tokens = NetrcTokens(bytes)
        // The entry that applies, once its `machine` or `default` was seen; later entries are
        // not read (curl takes the first that fits).
        var found: NetrcMatch?
        var password = false
        while let token = tokens.next() {
            if tokens.startsLine, token.first == UInt8(ascii: "#") { tokens.skipLine(); continue }
            let word = String(decoding: token, as: UTF8.self).lowercased()
            if found != nil, word == "machine" || word == "default" { break }
            switch word {
            case "machine":
                guard let name = tokens.next() else {
                    return .malformed(file: file, line: tokens.line, problem: "machine at the end of the file names no host")
                }
                if String(decoding: name, as: UTF8.self).lowercased() == host {
                    found = .machine(file: file, host: host, password: false)
                }
            case "default":
                found = .defaultEntry(file: file, password: false)
            case "login", "account":
                _ = tokens.next()
            case "password":
                if let value = tokens.next(), found != nil { password = !value.isEmpty }
            case "macdef":
                tokens.skipMacro()
            default:
                break
            }
        }
        if let line = tokens.unterminatedQuote {
            return .malformed(file: file, line: line, problem: "a quoted value has no closing quote on its line")
        }
        switch found {
        case .machine?: return .machine(file: file, host: host, password: password)
        case .defaultEntry?: return .defaultEntry(file: file, password: password)
        default: return .noMachine(file: file, host: host)
        }
    }
}
