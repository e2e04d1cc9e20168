#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP

/// The only place that writes to the terminal.
enum Output {
    private static let lock = Locked(())

    static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    static func err(_ line: String) { write(line + "\n", to: STDERR_FILENO) }
    /// Text for stderr as it is, no newline added: terminal control for the progress bar.
    static func raw(_ text: String) { write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue }; return }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
