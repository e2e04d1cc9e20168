#if canImport(Glibc)
import Glibc
#endif
import SyncrManifest

/// Something to know before applying a plan, that fails no entry by itself: `Plan.warnings`,
/// and `Session.applyWarnings()` at the start of apply.
public enum PlanWarning: Sendable, Equatable, CustomStringConvertible {
    /// The downloads still to be written on one file system need `needed` bytes where
    /// `available` are free (`folder` is a folder on it). Apply starts them anyway, and stops
    /// those that do not fit with `no_space`, keeping what arrived for the next run.
    case notEnoughSpace(folder: String, needed: Int64, available: Int64)
    /// Entries have `netrc: true`, and the netrc file (`NETRC`, else `~/.netrc`) cannot be
    /// read (`errno`): their requests go without its credentials.
    case netrcUnreadable(path: String, errno: Int32)

    /// A stable name for scripts: `not_enough_space`, `netrc_unreadable`.
    public var code: String {
        switch self {
        case .notEnoughSpace: return "not_enough_space"
        case .netrcUnreadable: return "netrc_unreadable"
        }
    }

    /// The file or folder the warning is about: the folder short of space, the netrc file.
    public var path: String {
        switch self {
        case .notEnoughSpace(let folder, _, _): return folder
        case .netrcUnreadable(let path, _): return path
        }
    }

    /// One line: what is short, and what to do.
    public var description: String {
        switch self {
        case let .notEnoughSpace(folder, needed, available):
            return "downloads need \(ByteSize.format(needed)) in \(folder) but \(ByteSize.format(available)) is free;"
                + " free some space first, or apply will stop the entries that do not fit"
        case let .netrcUnreadable(path, errno):
            return "netrc: true, but \(path) cannot be read (\(String(cString: strerror(errno)))), so those requests go without "
                + "its credentials; create it, or set NETRC to the netrc file"
        }
    }
}
