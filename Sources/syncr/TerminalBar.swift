#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The terminal state the progress bar changes (a hidden cursor), and how to put it back.
enum TerminalBar {
    /// What the bar changed on the terminal and has not put back.
    private enum Change: UInt8, AtomicRepresentable {
        case nothing
        case cursorHidden
        /// The cursor is hidden and colours are drawn (a signal may cut one off before its reset).
        case cursorHiddenAndColours
    }

    private static let changed = Atomic<Change>(.nothing)

    /// Runs the lazy initialisation of the flag outside any signal handler.
    static func prepare() { _ = changed.load(ordering: .relaxed) }

    /// Hides the cursor while the bar is drawn.
    /// - Parameter colour: the bar draws colours. Without (`NO_COLOR`), nothing it writes
    ///   resets them either: no-color.org asks for no colour sequence at all.
    static func hideCursor(colour: Bool) {
        changed.store(colour ? .cursorHiddenAndColours : .cursorHidden, ordering: .releasing)
        Output.raw("\u{1B}[?25l")
    }

    /// Shows the cursor again (the normal way, at the end of a run).
    static func showCursor() {
        switch changed.exchange(.nothing, ordering: .acquiringAndReleasing) {
        case .cursorHiddenAndColours: Output.raw("\u{1B}[0m\u{1B}[?25h")
        case .cursorHidden: Output.raw("\u{1B}[?25h")
        case .nothing: break
        }
    }

    /// For a signal handler: if the bar hid the cursor, shows it, resets colours (where it drew
    /// them) and ends the bar's line, with one write(2) of a constant buffer. Async-signal-safe:
    /// no allocation, no lock (an atomic exchange on a lock-free value and write(2) only). Does
    /// nothing otherwise.
    static func emergencyRestore() {
        let sequence: StaticString
        switch changed.exchange(.nothing, ordering: .acquiringAndReleasing) {
        case .cursorHiddenAndColours: sequence = "\u{1B}[0m\u{1B}[?25h\n"
        case .cursorHidden: sequence = "\u{1B}[?25h\n"
        case .nothing: return
        }
        _ = write(STDERR_FILENO, sequence.utf8Start, sequence.utf8CodeUnitCount)
    }
}
