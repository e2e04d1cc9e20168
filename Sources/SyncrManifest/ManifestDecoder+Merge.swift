/// Merge keys (`<<: *base`), as YAML 1.1's merge type defines them
/// (https://yaml.org/type/merge.html): the keys of the merged mapping join the mapping that
/// holds `<<`, a key written in that mapping wins over a merged one, and with a list of mappings
/// an earlier one wins over a later one.
extension ManifestDecoder {
    /// `<<` written plainly (or tagged `!!merge`); a quoted `"<<"` is an ordinary key.
    static func isMergeKey(_ key: YAMLScalar) -> Bool {
        key.text == "<<" && (key.tag == "tag:yaml.org,2002:merge" || (key.style == .plain && key.tag == nil))
    }

    /// The entries a `<<` value brings in, earlier sources first. Each source's own merge keys
    /// and duplicates are handled by `mappingEntries`; a source that is not a mapping is reported.
    mutating func mergedEntries(_ value: YAMLNode, path: String, foldCase: Bool = false) -> [Entry] {
        let expected = "a mapping or a list of mappings to merge (<<: *name or <<: [*a, *b])"
        let sources: [YAMLNode]
        switch value.content {
        case .mapping: sources = [value]
        case .sequence(let items): sources = items
        default:
            mismatch(path, expected: expected, found: value)
            return []
        }
        var out: [Entry] = []
        for source in sources {
            guard case .mapping = source.content else {
                mismatch(path, expected: expected, found: source)
                continue
            }
            out += mappingEntries(source, path: path, nullIsEmpty: false, foldCase: foldCase) ?? []
        }
        return Self.unshadowed(out, by: [], foldCase: foldCase)
    }

    /// The key nodes of a mapping, merged ones included, reporting nothing: for a check that
    /// runs after `mappingEntries` has reported the mapping's problems.
    static func keysWithMerges(_ node: YAMLNode) -> [YAMLNode] {
        guard case .mapping(let pairs) = node.content else { return [] }
        var keys: [YAMLNode] = []
        for pair in pairs {
            guard let key = pair.key.scalar, isMergeKey(key) else {
                keys.append(pair.key)
                continue
            }
            switch pair.value.content {
            case .mapping: keys += keysWithMerges(pair.value)
            case .sequence(let items): for item in items { keys += keysWithMerges(item) }
            default: break
            }
        }
        return keys
    }

    /// `merged` without the keys `explicit` has, and without repeats (the first one stays);
    /// with `foldCase`, keys are compared lowercased.
    static func unshadowed(_ merged: [Entry], by explicit: [Entry], foldCase: Bool = false) -> [Entry] {
        guard !merged.isEmpty else { return [] }
        let name: (Entry) -> String = foldCase ? { $0.key.lowercased() } : { $0.key }
        var seen = Set(explicit.map(name))
        return merged.filter { seen.insert(name($0)).inserted }
    }
}
