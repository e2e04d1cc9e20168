/// What a local path written in the manifest (a download's `to:`, an upload's `from:`, `cache:`,
/// `ca_cert:`) may not hold. Each is legal in a POSIX file name, and each made a file other than
/// the one meant, or one that shows as another.
enum WrittenPath {
    /// Why `text` (not empty) cannot be a path, in words that end a message; nil when it can be.
    /// - Parameter home: `HOME` from the environment, to write out what a `~/...` meant.
    static func problem(_ text: String, home: String?) -> String? {
        // Most paths are printable ASCII: one pass over the bytes tells (100,000 entries each
        // have one).
        if text.utf8.first != UInt8(ascii: "~"), text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return nil }
        if text.unicodeScalars.contains("\0") { return "a path cannot contain a NUL byte" }
        if let found = text.unicodeScalars.first(where: isBidiControl) {
            // "Trojan Source" (CVE-2021-42574): U+202E shows `gpj.exe` as `exe.jpg`.
            return "a path cannot contain the bidirectional control \(escaped(found)), which makes a name display as "
                + "another; remove it"
        }
        if let found = text.unicodeScalars.first(where: isControl) {
            return "a path cannot contain a line break or control character, found \(escaped(found))"
                + (found == "\n" && text.hasSuffix("\n") ? lineBreakAdvice : "; remove it")
        }
        return text.hasPrefix("~") ? tildeProblem(text, home: home) : nil
    }

    /// `to: |` then the name on the next line keeps the line break after it: the file was made
    /// as `a.bin\n`.
    private static let lineBreakAdvice = " at its end (a `|` or `>` block keeps the line's break); "
        + "write the path on the key's line, or start the block with `|-`"

    /// `~` is the shell's, not the file system's: `cache: ~/.cache/syncr` made a folder named `~`
    /// in the manifest's folder, where a later `rm -rf ~` removes the home folder instead. The
    /// advice is the path written out: `${HOME}` is not expanded in a path either.
    private static func tildeProblem(_ text: String, home: String?) -> String {
        let rest = text.dropFirst()
        let firstPart = text.prefix { $0 != "/" }
        var written = "the home folder written out"
        if let home, home.hasPrefix("/"), firstPart == "~" {
            written = home == "/" && !rest.isEmpty ? String(rest) : home + rest
        }
        return "syncr does not expand ~ (nor ${HOME} in a path): write the path itself (\(written)), "
            + "or ./\(text) for a folder really named \(firstPart)"
    }

    /// For a path key given a bare `~` (`cache: ~`): YAML reads it as null, so the value never
    /// reaches the path check, and "expected a folder path, found ~" said nothing of why `~`
    /// is not one. The advice is the same as for `~/x`.
    static func bareTildeProblem(home: String?) -> String {
        "a bare ~ is YAML's null (no value), not the home folder; " + tildeProblem("~", home: home)
    }

    /// C0 controls, DEL and C1 controls: nothing a name is typed with, all shown as nothing or
    /// garbage by `ls`.
    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (s.value >= 0x7F && s.value <= 0x9F)
    }

    /// The embeddings, overrides and isolates of Unicode's bidirectional algorithm (UAX #9):
    /// U+202A–U+202E, U+2066–U+2069.
    static func isBidiControl(_ s: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value)
    }

    /// `\u{A}`: how Swift writes the character, which names it whatever the terminal shows.
    static func escaped(_ s: Unicode.Scalar) -> String {
        "\\u{\(String(s.value, radix: 16, uppercase: true))}"
    }
}
