#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// The only place that writes to the terminal.
enum Output {
    /// Held while a text is written, so lines from several threads never interleave. It guards
    /// the count of bytes written rather than nothing: ThreadSanitizer reports the accesses to
    /// an empty value against the lock object itself, as if they raced.
    private static let lock = Locked<Int>(0)

    static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    static func err(_ line: String) { write(line + "\n", to: STDERR_FILENO) }
    /// Text for stderr as it is, no newline added: terminal control for the progress bar.
    static func raw(_ text: String) { write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock { written in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue }; return }
                bytes = bytes.dropFirst(n)
                written += n
            }
        }
    }
}
