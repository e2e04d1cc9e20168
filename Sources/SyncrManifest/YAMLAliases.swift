/// Anchors (`&name`) and aliases (`*name`), and the bound that keeps an alias bomb out.
///
/// Users reuse blocks with anchors because GitLab CI, Compose and Kubernetes files taught them
/// to. The danger is the "billion laughs" document: nine lines of nested aliases that expand to
/// a billion nodes. So the parser first reads the document with each alias as a reference and
/// counts, in O(written nodes), how many nodes the expanded document would hold; only a document
/// within `limit` is then expanded. Nothing is copied before the count is known.
struct AliasTable {
    /// A document may expand to this many times the nodes it writes...
    static let factor = 10
    /// ...or to this many nodes, whichever is more, so that a short manifest can still reuse a
    /// header block in many entries. 100,000 nodes are a few megabytes.
    static let floor = 100_000
    /// Collections may nest this deep once aliases are expanded. libyaml stops written nesting
    /// at 1000 levels; without this, a chain of aliases to deep values could nest far deeper and
    /// exhaust the stack of the code that walks the tree.
    static let maxDepth = 1000
    /// Counts stop here rather than overflow; any count this high is refused anyway.
    private static let saturation = Int.max / 4

    private enum Anchor {
        /// The anchored node has started and not yet ended: an alias to it would contain itself.
        case open(YAMLMark)
        case done(index: Int)
    }

    /// YAML 1.2 §7.1: an alias refers to the most recent preceding node with that anchor, so a
    /// redefinition replaces the entry.
    private var byName: [String: Anchor] = [:]
    /// Anchored nodes as written: aliases inside them are still references.
    private var nodes: [YAMLNode] = []
    /// How many nodes each anchored node expands to, and how deep it nests.
    private var sizes: [Int] = []
    private var depths: [Int] = []
    /// Nodes written in the document, each alias counting as one.
    private var written = 0
    /// Nodes the document holds so far once every alias is replaced by a copy of its node.
    private(set) var produced = 0
    /// Each alias with `produced` just after it, to name the alias that crossed the limit.
    private var trail: [(mark: YAMLMark, produced: Int)] = []

    /// The most nodes this document may expand to.
    var limit: Int { max(Self.factor * written, Self.floor) }

    /// A scalar, sequence or mapping starts; returns the count to hand to `ended`.
    mutating func started(anchor: String?, at mark: YAMLMark) -> Int {
        let before = produced
        written += 1
        produced = Self.add(produced, 1)
        if let anchor { byName[anchor] = .open(mark) }
        return before
    }

    /// The node that started when `produced` was `before` is complete.
    mutating func ended(_ node: YAMLNode, anchor: String?, before: Int, depth: Int) {
        guard let anchor else { return }
        nodes.append(node)
        sizes.append(produced - before)
        depths.append(depth)
        byName[anchor] = .done(index: nodes.count - 1)
    }

    /// Aliases that name no anchor before them, or the value they are inside: each is one
    /// error among the manifest's others, so the document is read on (libyaml's parser knows
    /// nothing of anchors and goes on past them) with a stand-in where the alias is.
    private(set) var broken: [YAMLSyntaxError] = []

    /// An alias, as a reference to its anchored node, and how deep that node nests.
    ///
    /// When no node before it has the anchor, or the alias is inside the node it names, the
    /// problem goes to `broken` and the alias stands for an empty mapping at its own mark
    /// (`standIn`): what the decoder would say of it there is not said (`ManifestDecoder.report`).
    mutating func alias(_ name: String, at mark: YAMLMark) -> (YAMLNode, depth: Int) {
        switch byName[name] {
        case nil:
            return standIn(at: mark, for: YAMLSyntaxError(
                mark: mark,
                message: "the alias *\(name) refers to no anchor; define &\(name) on a value before this line (an anchor must come before its aliases)"))
        case .open(let anchorMark):
            return standIn(at: mark, for: YAMLSyntaxError(
                mark: mark,
                message: "the alias *\(name) is inside the value anchored &\(name) at \(anchorMark.position), so that value would contain itself; move the alias out of it"))
        case .done(let index):
            written += 1
            produced = Self.add(produced, sizes[index])
            trail.append((mark, produced))
            return (YAMLNode(content: .alias(name: name, anchor: index), mark: mark), depths[index])
        }
    }

    /// The empty mapping that stands where a broken alias is, counted as one written node.
    private mutating func standIn(at mark: YAMLMark, for problem: YAMLSyntaxError) -> (YAMLNode, depth: Int) {
        broken.append(problem)
        written += 1
        produced = Self.add(produced, 1)
        return (YAMLNode(content: .mapping([]), mark: mark), 1)
    }

    /// - Throws: at a collection that nests deeper than `maxDepth` with its aliases expanded.
    static func checkDepth(_ depth: Int, at mark: YAMLMark) throws(YAMLSyntaxError) {
        guard depth > maxDepth else { return }
        throw YAMLSyntaxError(
            mark: mark,
            message: "this value nests more than \(maxDepth) levels deep once its aliases are expanded; nest fewer aliases inside each other")
    }

    /// The document with every alias replaced by a copy of its anchored node, each copied node's
    /// mark naming the aliases that used it.
    ///
    /// - Throws: at the alias that took the document past `limit`, before anything is copied.
    func expanded(_ root: YAMLNode) throws(YAMLSyntaxError) -> YAMLNode {
        if produced > limit {
            let crossing = trail.first { $0.produced > limit }?.mark
            throw YAMLSyntaxError(
                mark: crossing,
                message: "aliases expand this document to more than \(limit) values (\(Self.factor) times the \(written) it writes, or at least \(Self.floor)); this looks like an alias bomb (\"billion laughs\"); write the repeated values out or nest fewer aliases")
        }
        // Without an alias there is nothing to expand: the tree is returned as it is rather
        // than copied node by node (a tenth of `validate` for 100,000 entries).
        if trail.isEmpty { return root }
        return copy(root, usedBy: [])
    }

    private func copy(_ node: YAMLNode, usedBy: [YAMLMark]) -> YAMLNode {
        var out = node
        out.mark.usedBy = usedBy
        switch node.content {
        case .scalar:
            break
        case .sequence(let items):
            out.content = .sequence(items.map { copy($0, usedBy: usedBy) })
        case .mapping(let pairs):
            out.content = .mapping(pairs.map {
                YAMLPair(key: copy($0.key, usedBy: usedBy), value: copy($0.value, usedBy: usedBy))
            })
        case .alias(_, let index):
            // The copy keeps the positions of the anchored value; the alias is named after them.
            let aliasMark = YAMLMark(line: node.mark.line, column: node.mark.column)
            return copy(nodes[index], usedBy: [aliasMark] + usedBy)
        }
        return out
    }

    private static func add(_ a: Int, _ b: Int) -> Int {
        min(a + min(b, saturation), saturation)
    }
}
