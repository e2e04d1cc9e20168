/// Expands `${VAR}` and `${VAR:-default}` in manifest strings (urls and header values).
///
/// Like the shell, `:-` takes the default when the variable is unset *or* empty; `${VAR}` of an
/// empty-but-set variable expands to nothing. A `$` not followed by `{` is literal (`$$` too),
/// and `$${` is a literal `${` (as in Compose files and GitLab CI), the one way to write one.
/// A default cannot hold another reference: `${A:-${B}}` is refused (it ended at the first `}`,
/// and sent the text `${B}}` when A was unset). Names are `[A-Za-z_][A-Za-z0-9_]*`.
enum TemplateExpansion {
    /// Why a reference could not be expanded. Messages quote only what the manifest says.
    enum Problem: Equatable, Sendable {
        case unset(name: String)
        case malformed(String)
        /// A URL's variable whose value holds a `#`, which would start the URL's fragment.
        case fragmentInValue(name: String)

        var message: String {
            switch self {
            case .unset(let name):
                return "environment variable \(name) is not set (set it, or write ${\(name):-default})"
            case .malformed(let message):
                return message
            case .fragmentInValue(let name):
                // What follows a `#` is the fragment, which no client sends: `?token=${TOK}`
                // with TOK=a#b sent `?token=a`, and the server's 403 named no cause.
                return "the value of ${\(name)} holds a '#', which in a URL starts the fragment, never sent "
                    + "(what follows it would be cut off); percent-encode it as %23 in \(name) (the value is not shown)"
            }
        }
    }

    /// Expands every reference in `written`.
    ///
    /// - Parameter url: `written` is a URL: a variable's value may not hold a `#` (one written
    ///   in the manifest, or in a default, is the manifest's own fragment).
    /// - Returns: the template (with every non-empty substituted value in `secrets`), or every
    ///   problem found, in order.
    static func expand(_ written: String, environment: [String: String], url: Bool = false)
        -> Result<Template, ProblemList>
    {
        // Most values reference nothing: a byte search is enough to tell.
        if !written.containsByte(UInt8(ascii: "$")) {
            return .success(Template(written: written, expanded: written, secrets: []))
        }
        var problems: [Problem] = []
        var expanded = ""
        var secrets: [String] = []
        let scalars = Array(written.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "$", i + 2 < scalars.count, scalars[i + 1] == "$", scalars[i + 2] == "{" {
                expanded += "${"
                i += 3
                continue
            }
            guard c == "$", i + 1 < scalars.count, scalars[i + 1] == "{" else {
                expanded.unicodeScalars.append(c)
                i += 1
                continue
            }
            guard let close = scalars[(i + 2)...].firstIndex(of: "}") else {
                problems.append(.malformed(
                    "unterminated reference '\(text(scalars[i...]))'; close it with '}'"))
                break
            }
            let reference = text(scalars[i...close])
            let body = Array(scalars[(i + 2)..<close])
            i = close + 1
            guard !body.isEmpty else {
                problems.append(.malformed("empty reference '${}'; write ${NAME} or ${NAME:-default}"))
                continue
            }
            var nameEnd = 0
            while nameEnd < body.count, isNameScalar(body[nameEnd], first: nameEnd == 0) {
                nameEnd += 1
            }
            let name = text(body[..<nameEnd])
            let rest = body[nameEnd...]
            let fallback: String?
            if rest.isEmpty {
                fallback = nil
            } else if rest.count >= 2, rest[rest.startIndex] == ":", rest[rest.startIndex + 1] == "-" {
                let written = text(rest.dropFirst(2))
                fallback = written
                if written.contains("${"), nameEnd > 0 {
                    // Past the `}` that closes the inner reference too, so that the message
                    // quotes the whole of it.
                    let whole = i < scalars.count && scalars[i] == "}"
                    if whole { i += 1 }
                    problems.append(.malformed(
                        "'\(reference)\(whole ? "}" : "")': a default cannot hold another ${...}; set \(name), or write the default out"))
                    continue
                }
            } else if nameEnd == 0 {
                problems.append(.malformed(
                    "invalid variable name in '\(reference)'; names are letters, digits and '_', not starting with a digit"))
                continue
            } else {
                problems.append(.malformed(
                    "unsupported reference '\(reference)'; write ${NAME} or ${NAME:-default}"))
                continue
            }
            guard nameEnd > 0 else {
                problems.append(.malformed(
                    "invalid variable name in '\(reference)'; names are letters, digits and '_', not starting with a digit"))
                continue
            }
            let value: String
            if let set = environment[name], !(set.isEmpty && fallback != nil) {
                value = set
                // A variable that gives the whole URL (`url: ${ARTIFACT_URL}`) carries its own
                // fragment, as its owner wrote it, and nothing of the manifest's follows it.
                let wholeURL = expanded.isEmpty && i >= scalars.count && set.contains("://")
                if url, !wholeURL, set.containsByte(UInt8(ascii: "#")) { problems.append(.fragmentInValue(name: name)) }
            } else if let fallback {
                value = fallback
            } else {
                problems.append(.unset(name: name))
                continue
            }
            expanded += value
            if !value.isEmpty, !secrets.contains(value) { secrets.append(value) }
        }
        if !problems.isEmpty { return .failure(ProblemList(problems: problems)) }
        return .success(Template(written: written, expanded: expanded, secrets: secrets))
    }

    /// `Result` needs an `Error`; this carries every problem of one string.
    struct ProblemList: Error, Equatable {
        var problems: [Problem]
    }

    private static func isNameScalar(_ s: Unicode.Scalar, first: Bool) -> Bool {
        guard s.isASCII else { return false }
        let v = s.value
        if v == 95 || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) { return true }
        return !first && v >= 48 && v <= 57
    }

    private static func text<S: Sequence>(_ scalars: S) -> String where S.Element == Unicode.Scalar {
        var s = ""
        s.unicodeScalars.append(contentsOf: scalars)
        return s
    }
}
