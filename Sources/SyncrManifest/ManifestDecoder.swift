/// Walks the YAML tree of a manifest, builds the typed `Manifest` and collects every problem.
///
/// Decoding never stops at the first problem: a bad value is reported and skipped, so one run
/// shows all of them. Values are read as written (`YAMLScalar.text`); nothing expanded from the
/// environment ever goes into a message.
struct ManifestDecoder {
    let file: String
    /// The manifest's bytes, and where each line starts: a line becomes a `String` only when a
    /// message quotes it (splitting 100,000 lines up front cost 8% of `validate`).
    let bytes: [UInt8]
    let lineStarts: [Int]
    /// Absolute, normalized folder of the manifest.
    let directory: String
    let environment: [String: String]
    /// What `report` found, each with its line as written and its column on it: only
    /// `diagnostics` hands them out, with the line quoted and masked (`QuotedLine`).
    private(set) var reported: [(diagnostic: Diagnostic, line: String?)] = []
    /// Credential header values written out in the manifest so far (`Header.maskedValues`):
    /// a quoted line masks them, also one reported before they were read.
    var writtenSecrets: [String] = []
    /// The cache folder (absolute, normalized), once `cache:` was read: no destination may lie
    /// in it, and no unpacked folder hold it. Nil for a cache that is the manifest's folder or
    /// above it (`cache: .`), which is refused, and holds every destination: one error for it,
    /// not one for each of them.
    var cacheDirectory: String?
    /// Header values whose variables are not set are kept as written (`ManifestLoader.load`).
    var headersUnexpanded = false
    /// What keeps the cache folder (absolute) from being one, for a run that uses `cache:`
    /// (`ManifestLoader.load`); nil: not asked.
    var cacheFolderProblem: ((String) -> String?)?
    /// The manifest and its lockfile (absolute): no download may be written over them.
    let ownFiles: (manifest: String, lockfile: String)
    /// Where aliases stand that name no anchor (`reportBrokenAliases`), each read as an empty
    /// mapping: what would be said of that stand-in is not said.
    private(set) var brokenAliases: Set<YAMLMark> = []

    init(file: String, text: String, directory: String, environment: [String: String]) {
        self.file = file
        let name = file.split(separator: "/").last.map(String.init) ?? file
        let manifest = directory == "/" ? "/" + name : directory + "/" + name
        ownFiles = (manifest, Lockfile.path(forManifest: manifest))
        bytes = Array(text.utf8)
        lineStarts = Self.lineStarts(of: bytes)
        self.directory = directory
        self.environment = environment
    }

    // MARK: Reporting

    /// A problem at `mark`. A value reached through an alias is shown where it is written, and
    /// the message names the alias that used it: that is the line to look at in both cases.
    mutating func report(_ path: String, at mark: YAMLMark?, _ message: String, hint: String? = nil) {
        if !brokenAliases.isEmpty, let mark, isBrokenAlias(mark) { return }
        let location = mark.map { SourceLocation(file: file, line: $0.line, column: $0.column) }
        let text = message + (mark.map(Self.aliasNote) ?? "")
        reported.append((Diagnostic(file: file, location: location, path: path, message: URLCredentials.masked(text),
                                    sourceLine: nil, hint: hint),
                         mark.flatMap { line($0.line) }))
    }

    /// Reports each alias the parser found to name no anchor (or the value it is inside), as
    /// one error among the others. An alias to a missing anchor stopped the whole manifest's
    /// errors from being reported: the parser now puts an empty mapping in its place, and
    /// from here on nothing is said of that stand-in (it is not what was meant), nor of a key
    /// missing from a mapping that merges one (`mergesBrokenAlias`).
    mutating func reportBrokenAliases(_ problems: [YAMLSyntaxError]) {
        for problem in problems {
            report("", at: problem.mark, problem.message)
            if let mark = problem.mark { brokenAliases.insert(YAMLMark(line: mark.line, column: mark.column)) }
        }
    }

    /// Whether a broken alias stands at `mark`, also as a copy another alias made of it.
    func isBrokenAlias(_ mark: YAMLMark) -> Bool {
        brokenAliases.contains(YAMLMark(line: mark.line, column: mark.column))
    }

    /// Whether `node` merges a broken alias (`<<: *nope`), itself or through a mapping it
    /// merges: a required key it lacks may be in the anchor that is not there.
    func mergesBrokenAlias(_ node: YAMLNode) -> Bool {
        guard !brokenAliases.isEmpty, case .mapping(let pairs) = node.content else { return false }
        return pairs.contains { pair in
            guard let key = pair.key.scalar, Self.isMergeKey(key) else { return false }
            var sources = [pair.value]
            if case .sequence(let items) = pair.value.content { sources = items }
            return sources.contains { isBrokenAlias($0.mark) || mergesBrokenAlias($0) }
        }
    }

    /// Every problem found, each with its line quoted: the secrets written on it masked (a
    /// URL's password, a credential header's value, also one read after the problem was), and
    /// the caret moved to where the column is on the masked line.
    var diagnostics: [Diagnostic] {
        reported.map { found in
            var diagnostic = found.diagnostic
            if let line = found.line, let column = diagnostic.location?.column {
                let quoted = QuotedLine(line, column: column, secrets: writtenSecrets)
                diagnostic.sourceLine = quoted.text
                diagnostic.caretColumn = quoted.caretColumn
            }
            return diagnostic
        }
    }

    /// Line `number` (1-based) without its line break, nil past the end.
    func line(_ number: Int) -> String? {
        lineBounds(number).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// Where each line starts, counting line breaks as libyaml does (its marks are what
    /// messages point at): LF, CR LF, a lone CR, and NEL, U+2028 and U+2029 (YAML 1.1). Split on
    /// LF alone, a pasted U+2028 or a file with CR endings put every message on the wrong line.
    static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [0]
        var i = 0
        while i < bytes.count {
            let width = breakWidth(bytes, at: i)
            if width > 0 {
                starts.append(i + width)
                i += width
            } else {
                i += 1
            }
        }
        return starts
    }

    /// For a syntax error: where the first line break that looks like none is (NEL, U+2028,
    /// U+2029, usually pasted from a document), which YAML counts and an editor does not show.
    func unusualBreakHint() -> String? {
        for (index, start) in lineStarts.enumerated().dropFirst() {
            let width = start >= 3 && Self.breakWidth(bytes, at: start - 3) == 3 ? 3
                : start >= 2 && bytes[start - 2] == 0xC2 && Self.breakWidth(bytes, at: start - 2) == 2 ? 2 : 0
            guard width > 0 else { continue }
            let name = width == 2 ? "U+0085 (next line)" : bytes[start - 1] == 0xA8 ? "U+2028 (line separator)" : "U+2029 (paragraph separator)"
            return "line \(index) ends in a \(name), which YAML counts as a line break and editors seldom show; replace it with a newline, or remove it"
        }
        return nil
    }

    /// For a syntax error on a line indented with a tab: libyaml says only that a character
    /// "cannot start any token" (or names the tab without saying what to do), and an editor
    /// shows the tab as spaces. Other errors on such a line (a missing comma in a flow list,
    /// where tabs are allowed) get no such hint.
    func tabHint(for message: String, at mark: YAMLMark?) -> String? {
        guard message.contains("cannot start any token") || message.contains("tab character"),
              let mark, let bounds = lineBounds(mark.line) else { return nil }
        let indentation = bytes[bounds].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard indentation.contains(UInt8(ascii: "\t")) else { return nil }
        return "line \(mark.line) is indented with a tab, and YAML indents with spaces only; replace the tab with spaces"
    }

    /// The length of the line break at `i` (CR LF is one), 0 for none.
    static func breakWidth(_ bytes: [UInt8], at i: Int) -> Int {
        switch bytes[i] {
        case 0x0A: return 1
        case 0x0D: return i + 1 < bytes.count && bytes[i + 1] == 0x0A ? 2 : 1
        case 0xC2: return i + 1 < bytes.count && bytes[i + 1] == 0x85 ? 2 : 0
        case 0xE2: return i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9) ? 3 : 0
        default: return 0
        }
    }

    /// Where line `number` (from 1) lies in `bytes`, without its line break.
    func lineBounds(_ number: Int) -> Range<Int>? {
        guard number >= 1, number <= lineStarts.count else { return nil }
        let start = lineStarts[number - 1]
        var end = number < lineStarts.count ? lineStarts[number] : bytes.count
        // Back over the break that ends the line (the last line has none).
        if number < lineStarts.count {
            var b = start
            while b < end, Self.breakWidth(bytes, at: b) != end - b { b += 1 }
            end = b
        }
        return start..<end
    }

    /// ` (used by the alias at 7:14)`, with the outer aliases when aliases nest; empty for a
    /// value read where it is written.
    static func aliasNote(_ mark: YAMLMark) -> String {
        guard let first = mark.usedBy.first else { return "" }
        let outer = mark.usedBy.dropFirst().map { ", itself used by the alias at \($0.position)" }
        return " (used by the alias at \(first.position)\(outer.joined()))"
    }

    /// `expected <what>, found <node>`.
    mutating func mismatch(_ path: String, expected: String, found node: YAMLNode) {
        report(path, at: node.mark, "expected \(expected), found \(Self.describe(node))")
    }

    mutating func unknownKey(_ key: String, at mark: YAMLMark, parent: String, valid: [String]) {
        let path = Self.join(parent, key)
        if let guess = KeySuggestion.suggestion(for: key, among: valid) {
            report(path, at: mark, "unknown key '\(key)'; did you mean '\(guess)'?")
        } else {
            report(path, at: mark,
                   "unknown key '\(key)'; valid keys are: \(valid.joined(separator: ", "))")
        }
    }

    // MARK: Structure

    /// A key of a mapping, read as a string, with where it is written.
    struct Entry {
        var key: String
        var keyMark: YAMLMark
        var value: YAMLNode
    }

    /// The entries of a mapping, in order, with merge keys (`<<: *base`) applied. Reports
    /// non-mappings, keys that are not plain strings, and duplicate keys (at the second one; it
    /// is then skipped).
    ///
    /// - Parameter nullIsEmpty: whether `key:` with nothing after it counts as an empty mapping.
    /// - Parameter foldCase: keys that differ only in case are one key for merging (header
    ///   names): one written in the mapping replaces a merged one however it is spelled.
    mutating func mappingEntries(_ node: YAMLNode, path: String, nullIsEmpty: Bool, foldCase: Bool = false) -> [Entry]? {
        let pairs: [YAMLPair]
        switch node.content {
        case .mapping(let p):
            pairs = p
        case .scalar(let s) where nullIsEmpty && s.isNull:
            return []
        default:
            mismatch(path, expected: "a mapping", found: node)
            return nil
        }
        var entries: [Entry] = []
        entries.reserveCapacity(pairs.count)
        var merged: [Entry] = []
        // Where each key was first written. Most mappings have a handful of keys, which a
        // look along the list finds sooner than they are hashed; large ones get a table.
        var keys: [(text: String, line: Int)] = []
        var firstLine: [String: Int] = [:]
        let small = pairs.count <= 16
        for pair in pairs {
            guard let key = pair.key.scalar, !key.isNull else {
                mismatch(path, expected: "a key name", found: pair.key)
                continue
            }
            let seen = small ? keys.first { $0.text == key.text }?.line : firstLine[key.text]
            if let line = seen {
                report(Self.join(path, key.text), at: pair.key.mark,
                       "duplicate key '\(key.text)' (first at line \(line))")
                continue
            }
            if small { keys.append((key.text, pair.key.mark.line)) } else { firstLine[key.text] = pair.key.mark.line }
            if Self.isMergeKey(key) {
                merged += mergedEntries(pair.value, path: path, foldCase: foldCase)
            } else {
                entries.append(Entry(key: key.text, keyMark: pair.key.mark, value: pair.value))
            }
        }
        return merged.isEmpty ? entries : entries + Self.unshadowed(merged, by: entries, foldCase: foldCase)
    }

    // MARK: Scalars

    /// Any non-null scalar, as written (a plain `2024` is the string "2024").
    mutating func string(_ node: YAMLNode, path: String, expected: String = "a string") -> String? {
        guard let s = node.scalar, !s.isNull else {
            mismatch(path, expected: expected, found: node)
            return nil
        }
        return s.text
    }

    /// A path as written: a non-empty string that `WrittenPath` finds nothing wrong with (the
    /// caller resolves and checks it).
    mutating func pathText(_ node: YAMLNode, path: String, expected: String) -> String? {
        if let s = node.scalar, s.isNull, s.text == "~" {
            report(path, at: node.mark, WrittenPath.bareTildeProblem(home: environment["HOME"]))
            return nil
        }
        guard let text = string(node, path: path, expected: expected) else { return nil }
        guard !text.isEmpty else {
            report(path, at: node.mark, "expected \(expected), found an empty string")
            return nil
        }
        if let problem = WrittenPath.problem(text, home: environment["HOME"]) {
            report(path, at: node.mark, problem)
            return nil
        }
        return text
    }

    /// A plain integer within `range`.
    mutating func integer(_ node: YAMLNode, path: String, range: ClosedRange<Int>) -> Int? {
        guard let s = node.scalar, !s.isNull, let value = Self.integerValue(s.text) else {
            if let s = node.scalar, s.isPlain, Self.isTooLarge(s.text, parses: { Self.integerValue($0) != nil }) {
                report(path, at: node.mark, "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(s.text)")
            } else {
                mismatch(path, expected: "an integer", found: node)
            }
            return nil
        }
        guard s.isPlain else {
            report(path, at: node.mark,
                   "expected an integer, found the string \(Self.quoted(s.text)) (remove the quotes)")
            return nil
        }
        guard range.contains(value) else {
            report(path, at: node.mark,
                   "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(s.text)")
            return nil
        }
        return value
    }

    /// Whether `text` fails only because a number in it is too large: with each run of digits
    /// made `1`, it parses (`99999999999999999999`, `9999999999999999999999KiB`, `99999999999999h`
    /// are well formed, and were called not a number).
    static func isTooLarge(_ text: String, parses: (String) -> Bool) -> Bool {
        var shrunk = "", digits = 0, longest = 0
        for c in text.unicodeScalars {
            if ("0"..."9").contains(c) {
                digits += 1
                longest = max(longest, digits)
                if digits == 1 { shrunk.unicodeScalars.append("1") }
            } else {
                digits = 0
                shrunk.unicodeScalars.append(c)
            }
        }
        return longest >= 10 && parses(shrunk)
    }

    /// `true` or `false` (YAML 1.2 core schema: also `True`, `TRUE`, `False`, `FALSE`).
    mutating func bool(_ node: YAMLNode, path: String) -> Bool? {
        let value: Bool?
        switch node.scalar?.text {
        case "true", "True", "TRUE": value = true
        case "false", "False", "FALSE": value = false
        default: value = nil
        }
        guard let s = node.scalar, let value else {
            mismatch(path, expected: "true or false", found: node)
            return nil
        }
        guard s.isPlain else {
            report(path, at: node.mark,
                   "expected true or false, found the string \(Self.quoted(s.text)) (remove the quotes)")
            return nil
        }
        return value
    }

    /// A size like `512`, `64KiB` or `16MiB`, within `range` bytes.
    mutating func size(_ node: YAMLNode, path: String, range: ClosedRange<Int64>) -> Int64? {
        measure(node, path: path, range: range, kind: .size)
    }

    /// A size a second like `1KiB/s`, `512` or `10KiB` (`/s` optional), within `range` bytes a
    /// second.
    mutating func rate(_ node: YAMLNode, path: String, range: ClosedRange<Int64>) -> Int64? {
        measure(node, path: path, range: range, kind: .rate)
    }

    /// What `measure` reads: its words in messages, and its parser.
    enum Measure {
        case size, rate

        var example: String {
            self == .size ? "a size like 512, 64KiB or 16MiB" : "a rate like 512, 10KiB/s or 1MiB/s (bytes a second)"
        }

        func parse(_ text: String) -> Int64? {
            self == .size ? ByteSize.parse(text) : ByteSize.parseRate(text)
        }

        func format(_ bytes: Int64) -> String {
            ByteSize.format(bytes) + (self == .size ? "" : "/s")
        }
    }

    /// A size or a rate within `range`; reports a malformed one, or one out of range, as such.
    mutating func measure(_ node: YAMLNode, path: String, range: ClosedRange<Int64>, kind: Measure) -> Int64? {
        guard let text = string(node, path: path, expected: kind.example) else { return nil }
        guard let bytes = kind.parse(text), range.contains(bytes) else {
            if kind.parse(text) == nil, !Self.isTooLarge(text, parses: { kind.parse($0) != nil }) {
                // `min_split: 16MiB/s`: a rate where a size goes is named as such.
                let rateHere = kind == .size && ByteSize.parseRate(text) != nil
                report(path, at: node.mark, "expected \(kind.example), found \(Self.describe(node))"
                       + (rateHere ? "; this is a size, not a rate: remove the /s" : ""))
                return nil
            }
            let noun = kind == .size ? "a size" : "a rate"
            report(path, at: node.mark,
                   "expected \(noun) from \(kind.format(range.lowerBound)) to \(kind.format(range.upperBound)), found \(Self.describe(node))")
            return nil
        }
        return bytes
    }

    /// A duration greater than zero, in milliseconds.
    mutating func duration(_ node: YAMLNode, path: String) -> Int? {
        guard let text = string(node, path: path, expected: "a duration like 30s, 500ms or 1m30s")
        else { return nil }
        guard let ms = DurationText.parse(text) else {
            let tooLong = Self.isTooLarge(text, parses: { DurationText.parse($0) != nil })
            report(path, at: node.mark, tooLong
                ? "\(Self.describe(node)) is longer than syncr can count; give a duration of at most a few years"
                : "expected a duration like 30s, 500ms or 1m30s, found \(Self.describe(node))")
            return nil
        }
        guard ms > 0 else {
            report(path, at: node.mark, "expected a duration greater than zero, found \(Self.describe(node))")
            return nil
        }
        return ms
    }

    /// A string with `${VAR}` references expanded; every problem is reported at the value.
    /// - Parameter unsetAllowed: references to variables that are not set leave the value as
    ///   written, where nothing else is wrong with it.
    /// - Parameter url: the value is an http(s) URL, where a `#` from a variable is refused
    ///   (`TemplateExpansion.expand`); an `s3://` URL refuses every `#` in its key itself.
    mutating func template(_ node: YAMLNode, path: String, unsetAllowed: Bool = false, url: Bool = false) -> Template? {
        guard let written = string(node, path: path) else { return nil }
        let httpURL = url && !S3Location.isS3URL(written)
        switch TemplateExpansion.expand(written, environment: environment, url: httpURL) {
        case .success(let template):
            return template
        case .failure(let list) where unsetAllowed && list.problems.allSatisfy({
            if case .unset = $0 { return true } else { return false }
        }):
            return Template(written: written, expanded: written, secrets: [])
        case .failure(let list):
            for problem in list.problems { report(path, at: node.mark, problem.message) }
            return nil
        }
    }

    // MARK: Text helpers

    static func join(_ parent: String, _ key: String) -> String {
        parent.isEmpty ? key : parent + "." + key
    }

    static func integerValue(_ text: String) -> Int? {
        var digits = Substring(text)
        if digits.hasPrefix("+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, !digits.hasPrefix("+") else { return nil }
        return Int(digits)
    }

    /// What a node is, for `found ...`: `a mapping`, `nothing`, `4`, `"four"`.
    static func describe(_ node: YAMLNode) -> String {
        switch node.content {
        case .mapping: return "a mapping"
        case .sequence: return "a sequence"
        case .alias(let name, _): return "an alias (*\(name))"
        case .scalar(let s):
            if s.isNull { return s.text.isEmpty ? "nothing" : s.text }
            if s.isPlain, integerValue(s.text) != nil || Double(s.text) != nil
                || ["true", "false", "True", "False", "TRUE", "FALSE"].contains(s.text)
            {
                return s.text
            }
            return quoted(s.text)
        }
    }

    /// Double-quoted, with control characters escaped and long text shortened, so a message is
    /// always one readable line.
    static func quoted(_ text: String, limit: Int = 60) -> String {
        var out = "\""
        var count = 0
        for s in text.unicodeScalars {
            if count == limit {
                out += "..."
                break
            }
            count += 1
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if s.value < 0x20 || s.value == 0x7F {
                    out += "\\u{\(String(s.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out + "\""
    }
}
