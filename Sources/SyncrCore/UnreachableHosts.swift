import Synchronization
import SyncrHTTP
import SyncrLock

/// The servers of a run that nobody answered for (the name did not resolve, or the port refused
/// every connection) until an entry gave up on them.
///
/// Without it, when a mirror is down each of 2000 entries for it waits out its own retries: with
/// `jobs: 16` and three retries, about four minutes to say what the first entries knew after two
/// seconds. Once one entry has used up its retries on such a failure, every later attempt at
/// the same server fails at once with the same failure, saying why. Any answer from the server
/// (to an attempt already under way), even an error status, makes it count as reachable again.
/// A server that redirects to one nobody answers for is not the one down: the target is
/// (`TransferError.redirectTarget`), and an entry redirected there after it was given up on
/// stops after its own attempt (`Retrying`).
final class UnreachableHosts: Sendable {
    /// Origin (`scheme://host:port` as written in the URL, without user information) → the
    /// failure an entry gave up on.
    private let failures = Locked<[String: TransferError]>([:])
    /// Whether `failures` holds any server: every attempt asks, and almost always none is down,
    /// so that answer costs one atomic load (no lock, no origin found).
    private let anyDown = Atomic<Bool>(false)

    init() {}

    /// The failure that made `url`'s server count as unreachable; nil while it does not.
    func failure(for url: String) -> TransferError? {
        guard anyDown.load(ordering: .acquiring) else { return nil }
        let origin = Self.origin(of: url)
        return failures.withLock { $0[origin] }
    }

    /// Records the failure an entry gave up on, when it says nobody is there.
    func gaveUp(on url: String, after failure: TransferError) {
        guard failure.isUnreachable else { return }
        let origin = Self.origin(of: url)
        failures.withLock {
            $0[origin] = failure
            anyDown.store(true, ordering: .releasing)
        }
    }

    /// An answer came from `url`'s server.
    func reached(_ url: String) {
        guard anyDown.load(ordering: .acquiring) else { return }
        let origin = Self.origin(of: url)
        failures.withLock {
            $0.removeValue(forKey: origin)
            anyDown.store(!$0.isEmpty, ordering: .releasing)
        }
    }

    /// Forgets every server: each `plan` or `apply` of a session starts believing in all of them.
    func forgetAll() {
        failures.withLock {
            $0.removeAll()
            anyDown.store(false, ordering: .releasing)
        }
    }

    /// `scheme://host:port` of a URL, lowercased, without user information: everything before
    /// the path, query or fragment. Two spellings of one server (a default port written out)
    /// count as two, which costs only the retries of the second.
    static func origin(of url: String) -> String {
        let utf8 = url.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return url.lowercased() }
        var start = utf8.index(after: colon)
        while start < utf8.endIndex, utf8[start] == UInt8(ascii: "/") { start = utf8.index(after: start) }
        let end = utf8[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? utf8.endIndex
        var authority = url[start..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return (url[..<colon] + "://" + authority).lowercased()
    }
}
