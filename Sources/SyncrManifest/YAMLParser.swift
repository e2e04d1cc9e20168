import CYAML

/// Turns manifest bytes into a `YAMLNode` tree with libyaml's event API.
///
/// This is the only file that touches libyaml. The class owns the `yaml_parser_t` and the input
/// buffer libyaml reads from (it keeps a pointer into it), and frees both in `deinit`; no C type
/// leaves this file. The event API is used rather than `yaml_parser_load` because the document
/// API expands aliases as it goes, with no bound and without saying where a copy came from;
/// `AliasTable` counts the expansion first and keeps the alias positions on every copy.
final class YAMLParser {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>
    private let initialized: Bool
    /// The aliases `parseDocument` found to name no anchor (or the value they are inside), in
    /// document order, also when it then threw: each stands as an empty mapping in the tree.
    /// A reader must report them; the tree alone does not show them.
    private(set) var brokenAliases: [YAMLSyntaxError] = []

    /// - Parameter bytes: the manifest, UTF-8 (libyaml reports invalid UTF-8 as a syntax error).
    init(bytes: [UInt8]) {
        parser = .allocate(capacity: 1)
        input = .allocate(capacity: max(bytes.count, 1))
        _ = input.initialize(from: bytes)
        initialized = yaml_parser_initialize(parser) != 0
        if initialized {
            yaml_parser_set_input_string(parser, input.baseAddress, bytes.count)
        }
    }

    deinit {
        if initialized { yaml_parser_delete(parser) }
        parser.deallocate()
        input.deallocate()
    }

    /// Parses the single document of the stream.
    ///
    /// - Returns: the root node, or nil when the stream holds no document (empty file, only
    ///   comments).
    /// - Throws: `YAMLSyntaxError` at libyaml's problem mark; also when a second document follows,
    ///   at a collection nesting too deep and at the alias that expands the document too far.
    ///   An alias with no anchor, or inside its own anchored node, is no throw: it goes to
    ///   `brokenAliases`, and the rest of the document is read.
    func parseDocument() throws(YAMLSyntaxError) -> YAMLNode? {
        guard initialized else {
            throw YAMLSyntaxError(mark: nil, message: "libyaml could not allocate a parser")
        }
        var stack: [Frame] = []
        var root: YAMLNode?
        var documents = 0
        var aliases = AliasTable()
        defer { brokenAliases = aliases.broken }

        /// `depth`: how deep the node nests once its aliases are expanded.
        /// Changes the open collection where it lies in `stack`: taken out and put back, it
        /// was copied each time (every scalar of the document passes here).
        func attach(_ node: YAMLNode, depth: Int) {
            guard !stack.isEmpty else {
                root = node
                return
            }
            let top = stack.count - 1
            stack[top].deepest = max(stack[top].deepest, depth)
            switch stack[top].kind {
            case .sequence:
                stack[top].items.append(node)
            case .mapping:
                if let key = stack[top].pendingKey {
                    stack[top].pairs.append(YAMLPair(key: key, value: node))
                    stack[top].pendingKey = nil
                } else {
                    stack[top].pendingKey = node
                }
            }
        }

        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(parser, &event) != 0 else { throw currentError() }
            defer { yaml_event_delete(&event) }
            let mark = Self.mark(event.start_mark)
            switch event.type {
            case YAML_STREAM_END_EVENT:
                guard let root else { return nil }
                return try aliases.expanded(root)
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    throw YAMLSyntaxError(
                        mark: mark,
                        message: "a manifest holds one YAML document; remove this second one")
                }
            case YAML_ALIAS_EVENT:
                let (node, depth) = aliases.alias(Self.string(event.data.alias.anchor), at: mark)
                attach(node, depth: depth)
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let anchor = s.anchor.map { Self.string($0) }
                let before = aliases.started(anchor: anchor, at: mark)
                let text = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length),
                                  as: UTF8.self)
                let scalar = YAMLScalar(text: text, style: Self.style(s.style),
                                        tag: s.tag.map { Self.string($0) })
                let node = YAMLNode(content: .scalar(scalar), mark: mark)
                aliases.ended(node, anchor: anchor, before: before, depth: 1)
                attach(node, depth: 1)
            case YAML_SEQUENCE_START_EVENT:
                let anchor = event.data.sequence_start.anchor.map { Self.string($0) }
                let before = aliases.started(anchor: anchor, at: mark)
                stack.append(Frame(kind: .sequence, mark: mark, anchor: anchor, before: before))
            case YAML_MAPPING_START_EVENT:
                let anchor = event.data.mapping_start.anchor.map { Self.string($0) }
                let before = aliases.started(anchor: anchor, at: mark)
                stack.append(Frame(kind: .mapping, mark: mark, anchor: anchor, before: before))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                if let frame = stack.popLast() {
                    let depth = frame.deepest + 1
                    try AliasTable.checkDepth(depth, at: frame.mark)
                    aliases.ended(frame.node, anchor: frame.anchor, before: frame.before, depth: depth)
                    attach(frame.node, depth: depth)
                }
            default:
                break  // stream start, document end, no-op events
            }
        }
    }

    /// A collection being built while its events arrive.
    private struct Frame {
        enum Kind { case sequence, mapping }
        var kind: Kind
        var mark: YAMLMark
        /// `&name` on the collection, and `AliasTable.started`'s count, for `AliasTable.ended`.
        var anchor: String?
        var before: Int
        /// The deepest nesting among the items, keys and values so far, aliases expanded.
        var deepest = 0
        var items: [YAMLNode] = []
        var pairs: [YAMLPair] = []
        var pendingKey: YAMLNode?

        var node: YAMLNode {
            switch kind {
            case .sequence: return YAMLNode(content: .sequence(items), mark: mark)
            case .mapping: return YAMLNode(content: .mapping(pairs), mark: mark)
            }
        }
    }

    private func currentError() -> YAMLSyntaxError {
        let p = parser.pointee
        let problem = p.problem.map { String(cString: $0) } ?? "invalid YAML"
        if p.error == YAML_READER_ERROR {
            // Reader errors (bad UTF-8, control characters) carry a byte offset, not a mark.
            return YAMLSyntaxError(mark: markOfByte(p.problem_offset), message: problem)
        }
        guard let context = p.context.map({ String(cString: $0) }) else {
            return YAMLSyntaxError(mark: Self.mark(p.problem_mark), message: problem)
        }
        // An unclosed `[` or `{` is found only at the end of the input, a line past the last:
        // the place to show is where it was opened, which libyaml keeps as the context.
        let opened = Self.mark(p.context_mark)
        let atEnd = p.problem_mark.index >= characterCount
        return YAMLSyntaxError(mark: atEnd ? opened : Self.mark(p.problem_mark),
                               message: "\(problem) (\(context) at \(opened.position))")
    }

    /// The input's length as libyaml counts a mark's index: in characters (the first byte of each
    /// UTF-8 sequence), a byte order mark not counted.
    private var characterCount: Int {
        let characters = input.reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) }
        let bom = input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF
        return characters - (bom ? 1 : 0)
    }

    /// Line and column (in characters) of a byte offset into the input.
    private func markOfByte(_ offset: Int) -> YAMLMark {
        var line = 1
        var column = 1
        for byte in input.prefix(min(offset, input.count)) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // count only the first byte of each UTF-8 sequence
                column += 1
            }
        }
        return YAMLMark(line: line, column: column)
    }

    private static func mark(_ m: yaml_mark_t) -> YAMLMark {
        YAMLMark(line: Int(m.line) + 1, column: Int(m.column) + 1)
    }

    private static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String {
        guard let p else { return "" }
        return String(cString: UnsafePointer(p))
    }

    private static func style(_ s: yaml_scalar_style_t) -> YAMLScalarStyle {
        switch s {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: return .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: return .literal
        case YAML_FOLDED_SCALAR_STYLE: return .folded
        default: return .plain
        }
    }
}
