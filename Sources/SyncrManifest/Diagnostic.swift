/// One problem found in a manifest, with where it is and the text of that line.
///
/// Renders as
/// ```
/// syncr.yml:7:13: error: downloads[1].sha256: expected 64 hex digits, found 63
///     sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0
///             ^
/// ```
/// Messages never contain a value expanded from the environment.
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// The manifest file as given on the command line; printed when there is no `location`.
    public var file: String
    /// Where the problem is; nil for file-level problems (an unreadable file).
    public var location: SourceLocation?
    /// Manifest path like `downloads[1].sha256`; empty for the document level.
    public var path: String
    /// What is wrong, and where possible what to do about it.
    public var message: String
    /// The text of the source line at `location` (no newline).
    public var sourceLine: String?
    /// An optional suggestion, rendered as a trailing `hint:` line.
    public var hint: String?
    /// Where the caret goes under `sourceLine` (1-based, in Unicode scalars), when not at
    /// `location`'s column: the quoted line masks secrets, which shortens it.
    public var caretColumn: Int?

    /// Creates a diagnostic.
    public init(file: String, location: SourceLocation?, path: String, message: String,
                sourceLine: String?, hint: String? = nil) {
        self.file = file
        self.location = location
        self.path = path
        self.message = message
        self.sourceLine = sourceLine
        self.hint = hint
    }

    /// `FILE:LINE:COL: error: PATH: MESSAGE`, then the source line and a caret under the column,
    /// then `hint: ...` if there is one.
    public var description: String {
        var text = location.map { "\($0): error: " } ?? "\(file): error: "
        if !path.isEmpty { text += path + ": " }
        text += message
        if let location, let sourceLine {
            text += "\n" + sourceLine + "\n" + Self.caret(under: sourceLine, column: caretColumn ?? location.column)
        }
        if let hint { text += "\nhint: " + hint }
        return text
    }

    /// Spaces up to `column` (counted in characters as libyaml counts them, i.e. Unicode scalars),
    /// copying tabs from the source line so the caret lines up however tabs are displayed.
    static func caret(under line: String, column: Int) -> String {
        var prefix = ""
        var scalars = line.unicodeScalars.makeIterator()
        for _ in 0..<max(column - 1, 0) {
            prefix.append(scalars.next() == "\t" ? "\t" : " ")
        }
        return prefix + "^"
    }
}

/// Everything wrong with a manifest: the diagnostics are sorted by position and all reported at
/// once, so one run shows every problem.
public struct ManifestError: Error, Sendable, CustomStringConvertible {
    /// All problems found, in source order (file-level ones first).
    public var diagnostics: [Diagnostic]

    /// Creates an error from diagnostics, sorting them into source order.
    public init(diagnostics: [Diagnostic]) {
        self.diagnostics = Self.sorted(diagnostics)
    }

    /// Every diagnostic rendered, separated by newlines.
    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }

    /// Stable sort by (line, column); diagnostics without a location come first.
    static func sorted(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let ka = a.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            let kb = b.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }
}
