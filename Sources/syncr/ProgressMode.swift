#if canImport(Glibc)
import Glibc
#endif

/// `--progress`: how `apply` shows progress on stderr.
enum ProgressMode: String, CaseIterable, Sendable {
    /// `bar` on a terminal that can move its cursor, `plain` anywhere else (CI logs, pipes, files).
    case auto
    /// Lines redrawn in place, one per transfer and a total.
    case bar
    /// Whole lines only: a start and a finish line per entry, and a summary every interval.
    case plain
    /// No progress at all; failures and the final summary are still printed.
    case none

    /// The mode to use for `terminal`: `auto` decided, and a bar asked for on a terminal that
    /// says it cannot move its cursor (`TERM=dumb`, as Emacs shells set) given as plain lines.
    func resolved(for terminal: TerminalInfo) -> ProgressMode {
        if self == .bar && terminal.isDumb { return .plain }
        guard self == .auto else { return self }
        return terminal.canRedraw ? .bar : .plain
    }
}

/// What stderr is connected to, and what it may be sent.
struct TerminalInfo: Sendable {
    /// stderr is a terminal.
    var isTerminal: Bool
    /// `TERM=dumb`: no cursor movement, no colour.
    var isDumb: Bool
    /// `NO_COLOR` is set (to anything, https://no-color.org).
    var noColor: Bool

    /// A terminal that understands cursor movement, so a bar can be redrawn in place.
    var canRedraw: Bool { isTerminal && !isDumb }
    /// Colour only on such a terminal, and never when `NO_COLOR` is set.
    var colour: Bool { canRedraw && !noColor }

    static func stderr(environment: [String: String]) -> TerminalInfo {
        TerminalInfo(isTerminal: isatty(STDERR_FILENO) == 1,
                     isDumb: environment["TERM"] == "dumb",
                     noColor: environment["NO_COLOR"] != nil)
    }

    /// The size of the terminal on stderr, asked each time so that a resized window is followed
    /// without a SIGWINCH handler. Nil when stderr is not a terminal or the size is unknown.
    static func size() -> (columns: Int, rows: Int)? {
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), $0) }
        guard result == 0, size.ws_col > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}

/// ANSI colour for the few words worth it ("done", "FAILED", "retry"), or nothing.
struct Palette: Sendable {
    var enabled: Bool

    func green(_ s: String) -> String { paint(s, "32") }
    func red(_ s: String) -> String { paint(s, "31") }
    func yellow(_ s: String) -> String { paint(s, "33") }
    func bold(_ s: String) -> String { paint(s, "1") }

    private func paint(_ s: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
    }
}
