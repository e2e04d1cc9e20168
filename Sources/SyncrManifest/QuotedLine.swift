/// The source line a manifest error quotes, with the secrets written on it masked, and where
/// the caret goes on it.
///
/// A manifest error quotes its line in full, and an error in a CI log is read by whoever reads
/// the log: a URL's password, a credential query value and a credential header written out
/// (`Authorization: "Bearer ..."`, a cookie) are masked as everywhere else, also when the error
/// is about another value on that line (an unset `${VAR}` in the next header).
struct QuotedLine: Equatable {
    /// The line, masked.
    var text: String
    /// The caret's column (1-based, in Unicode scalars) on `text`: masking shortens the line, so
    /// the column libyaml gave for the line as written would point past the value.
    var caretColumn: Int

    /// - Parameters:
    ///   - line: the line as written.
    ///   - column: the column (1-based) on it that the error points at.
    ///   - secrets: credential header values written out in the manifest (`Header.maskedValues`).
    init(_ line: String, column: Int, secrets: [String]) {
        text = Self.masked(line, secrets: secrets)
        // Masking the part before the column gives the caret's place on the masked line. A
        // secret the column points into is cut there and may stay unmasked in that part: the
        // caret is kept on the line.
        let before = String(String.UnicodeScalarView(line.unicodeScalars.prefix(max(column - 1, 0))))
        let shifted = Self.masked(before, secrets: secrets).unicodeScalars.count + 1
        caretColumn = min(shifted, text.unicodeScalars.count + 1)
    }

    /// `line` with URL credentials and credential query values masked, and the credential
    /// header values on it: those decoded (`secrets`), and those written on it as `name: value`
    /// (for a line whose headers were never decoded: a YAML syntax error on it).
    static func masked(_ line: String, secrets: [String]) -> String {
        var text = URLCredentials.masked(line)
        // Longest first: a secret that holds another is masked whole.
        let all = secrets + writtenSecrets(text).map(String.init)
        for secret in all.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            text = text.replacing(secret, with: "***")
        }
        return text
    }

    /// The words of the credential headers written on `line` that look like secrets
    /// (`Header.looksLikeSecret`; a cookie pair by its value). Every word, not only the one
    /// after a scheme: on a line that did not parse, what the value is cannot be told.
    private static func writtenSecrets(_ line: String) -> [Substring] {
        // `name:` as YAML (or JSON) writes a key, then its value in a lookahead, so that a value
        // that runs on (a quote left open) still lets every later `name:` be tried: quoted (to
        // the end of the line when the quote is not closed, a common slip) or plain (up to a
        // `, ` or a bracket that ends a flow pair, or a ` #` comment; `a,b` and `a#b` are in it).
        let pairs = line.matches(of: #/
            (?<name> [A-Za-z0-9_-]+ ) ["']? [\t\x20]* : [\t\x20]*
            (?= "(?<double> [^"]* )"? | '(?<single> [^']* )'?
              | (?<plain> [^\t\x20"'{\[\#] (?: [^,}\]\t\x20] | [,}\]] (?! [\t\x20] | $ ) | [\t\x20]+ (?! \# | [\t\x20]* $ ) )* ) )
            /#)
        return pairs.flatMap { match -> [Substring] in
            guard Header(name: String(match.output.name), value: Template(literal: "")).carriesCredentials else { return [] }
            let value = match.output.double ?? match.output.single ?? match.output.plain ?? ""
            return value.split(whereSeparator: { " \t;\"'".contains($0) }).compactMap { word in
                // A `${VAR}` is a name, not a secret; a word ending in `:` is the next key of a
                // broken line; brackets around a word belong to the line's syntax.
                guard !word.contains("${") else { return nil }
                var word = word.drop { "{[".contains($0) }
                while let last = word.last, ":}]".contains(last) { word = word.dropLast() }
                let pairValue = word.firstIndex(of: "=").map { word[word.index(after: $0)...] } ?? ""
                return Header.looksLikeSecret(word) || Header.looksLikeSecret(pairValue) ? word : nil
            }
        }
    }
}
