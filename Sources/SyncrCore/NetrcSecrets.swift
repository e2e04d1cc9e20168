import Foundation
import SyncrManifest

/// The passwords of the netrc file that entries with `netrc: true` let curl read, to mask like
/// every other secret: a server may echo the password it was sent (an error page quoting the
/// request), and syncr never sees it otherwise, since curl reads the file itself.
enum NetrcSecrets {
    /// Every `password` of the file (`NETRC`, else `~/.netrc`) when some entry reads it; the
    /// file's `machine` lines are not matched to hosts: masking a password of another machine
    /// costs nothing. An unreadable file gives none (curl will not read it either).
    static func passwords(of manifest: Manifest) -> [String] {
        guard reads(manifest) else { return [] }
        // Bytes, not text: a file that is not UTF-8 throughout (a comment in Latin-1) is read
        // by curl all the same, and its passwords went out unmasked.
        guard let bytes = FS.readAll(path) else { return [] }
        return passwords(in: bytes)
    }

    /// Whether some entry has `netrc: true`.
    static func reads(_ manifest: Manifest) -> Bool {
        manifest.downloads.contains { $0.settings.network.netrc } || manifest.uploads.contains { $0.settings.network.netrc }
    }

    /// The file curl reads: `NETRC`, else `.netrc` in `HOME`, else in the user's home folder
    /// (curl's order; `NSHomeDirectory` alone is the password database's, which a runner that
    /// sets `HOME` does not change).
    static var path: String {
        if let file = NetworkEnvironment.netrcFile { return file }
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.netrc"
    }

    /// The warning for a netrc file that entries read and curl cannot (a mistyped `NETRC`, a
    /// runner without `~/.netrc`): curl then sends no credentials and says nothing, and the
    /// entry fails later with a 401 or 403 whose cause is not in sight.
    static func warning(for manifest: Manifest) -> PlanWarning? {
        guard reads(manifest) else { return nil }
        let path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .netrcUnreadable(path: path, errno: errno) }
        defer { close(fd) }
        // A folder opens too (a NETRC=/home/me/ typo), and curl reads nothing from it.
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR else { return .netrcUnreadable(path: path, errno: EISDIR) }
        return nil
    }

    /// The values after each `password` token and, where the same `machine` (or `default`)
    /// names a `login` too, what curl sends for the pair: `Authorization: Basic
    /// base64(login:password)`, which a server that echoes request headers would print. A value
    /// may be quoted (curl 7.84 and later), with curl's escapes inside (`\n`, `\r` and `\t` for
    /// those characters, a backslash before any other for that one); a `macdef` body (up to an
    /// empty line) holds no tokens. The pair is encoded from the file's bytes, as curl sends
    /// them, whatever their encoding.
    static func passwords(in text: String) -> [String] {
        passwords(in: Array(text.utf8))
    }

    static func passwords(in bytes: [UInt8]) -> [String] {
        var tokens = NetrcTokens(bytes)
        var found: [String] = []
        var login: [UInt8]?, password: [UInt8]?
        func endMachine() {
            if let login, let password {
                found.append(Data(login + [UInt8(ascii: ":")] + password).base64EncodedString())
            }
            (login, password) = (nil, nil)
        }
        while let token = tokens.next() {
            switch String(decoding: token, as: UTF8.self) {
            case "machine", "default": endMachine()
            case "login": login = tokens.next()
            case "password":
                if let value = tokens.next(), !value.isEmpty {
                    found.append(String(decoding: value, as: UTF8.self))
                    password = value
                }
            case "macdef": tokens.skipMacro()
            default: break
            }
        }
        endMachine()
        return found
    }
}
