#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// The only place that writes to the terminal.
enum Output {
    /// What the writes have met: bytes written, and the first error writing stdout. Held while
    /// a text is written, so lines from several threads never interleave.
    private struct State {
        var written = 0
        var stdoutError: Int32?
    }
    private static let lock = Locked(State())

    static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    static func err(_ line: String) { write(line + "\n", to: STDERR_FILENO) }
    /// Text for stderr as it is, no newline added: terminal control for the progress bar.
    static func raw(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Why stdout could not take everything written to it (a closed pipe, a full disk), or nil.
    /// A `--json` document cut short must not pass for a whole one: the run then exits 1.
    static var stdoutFailure: String? {
        lock.withLock { $0.stdoutError }.map { String(cString: strerror($0)) }
    }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock { state in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n >= 0 {
                    bytes = bytes.dropFirst(n)
                    state.written += n
                    continue
                }
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    // A pipe set non-blocking by whoever reads it (some CI runners do): wait
                    // until it takes more, rather than drop the rest.
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, -1)
                default:
                    if fd == STDOUT_FILENO, state.stdoutError == nil { state.stdoutError = errno }
                    return
                }
            }
        }
    }
}
