/// A position in the manifest text, 1-based (libyaml's 0-based marks are converted once, in
/// `YAMLParser`).
struct YAMLMark: Hashable, Comparable, Sendable {
    var line: Int
    var column: Int
    /// For a node copied in place of an alias: the aliases that used it, innermost first (the
    /// alias written inside another anchored node comes before the alias that used that one).
    /// Empty for a node read where it is written.
    var usedBy: [YAMLMark] = []

    /// `LINE:COL`, as messages name a second position.
    var position: String { "\(line):\(column)" }

    static func < (a: YAMLMark, b: YAMLMark) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }
}

/// How a scalar was written; decides whether `4` is a number or the string "4".
enum YAMLScalarStyle: Sendable {
    case plain, singleQuoted, doubleQuoted, literal, folded
}

/// A scalar with its text exactly as libyaml delivered it (escapes resolved, no typing yet).
struct YAMLScalar: Sendable {
    var text: String
    var style: YAMLScalarStyle
    /// The resolved tag, or nil when there was none (`!!str` becomes `tag:yaml.org,2002:str`).
    var tag: String?

    /// Plain scalars are typed by the YAML 1.2 core schema; anything quoted, block-styled or tagged
    /// `!!str` is a string.
    var isPlain: Bool { style == .plain && tag != "tag:yaml.org,2002:str" }

    /// `~`, `null` or nothing at all, written plainly.
    var isNull: Bool {
        // A switch, not an array literal's `contains`: every key of every mapping is asked,
        // and the array was built at each question.
        guard isPlain, text.utf8.count <= 4 else { return false }
        switch text {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }
}

/// One key/value pair of a mapping, in document order.
struct YAMLPair: Sendable {
    var key: YAMLNode
    var value: YAMLNode
}

/// A node of the manifest's single YAML document. Every node keeps the mark of its first
/// character so that any error about it can point there.
struct YAMLNode: Sendable {
    enum Content: Sendable {
        case scalar(YAMLScalar)
        case mapping([YAMLPair])
        case sequence([YAMLNode])
        /// `*name`, referring to the anchored node `AliasTable` keeps under `anchor`. Exists only
        /// inside `YAMLParser` between parsing and alias expansion; the decoder never sees one.
        case alias(name: String, anchor: Int)
    }

    var content: Content
    var mark: YAMLMark

    var scalar: YAMLScalar? {
        if case .scalar(let s) = content { return s }
        return nil
    }
}

/// A YAML syntax error, with libyaml's problem text at its problem mark.
struct YAMLSyntaxError: Error, Sendable {
    var mark: YAMLMark?
    var message: String
}
