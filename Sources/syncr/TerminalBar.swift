#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The terminal state the progress bar changes (a hidden cursor), and how to put it back.
enum TerminalBar {
    /// The bar hid the cursor and has not shown it again.
    private static let cursorHidden = Atomic<Bool>(false)

    /// Runs the lazy initialisation of the flag outside any signal handler.
    static func prepare() { _ = cursorHidden.load(ordering: .relaxed) }

    /// Hides the cursor while the bar is drawn.
    static func hideCursor() {
        cursorHidden.store(true, ordering: .releasing)
        Output.raw("\u{1B}[?25l")
    }

    /// Shows the cursor again (the normal way, at the end of a run).
    static func showCursor() {
        if cursorHidden.exchange(false, ordering: .acquiringAndReleasing) {
            Output.raw("\u{1B}[0m\u{1B}[?25h")
        }
    }

    /// For a signal handler: if the bar hid the cursor, shows it, resets colours and ends the
    /// bar's line, with one write(2) of a constant buffer. Async-signal-safe: no allocation, no
    /// lock (an atomic exchange on a lock-free flag and write(2) only). Does nothing otherwise.
    static func emergencyRestore() {
        guard cursorHidden.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let sequence: StaticString = "\u{1B}[0m\u{1B}[?25h\n"
        _ = write(STDERR_FILENO, sequence.utf8Start, sequence.utf8CodeUnitCount)
    }
}
