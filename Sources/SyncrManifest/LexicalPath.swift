/// POSIX paths handled as lists of components, never as string prefixes: `/a/bc` is not inside
/// `/a/b`, and `//..` cannot escape a folder (the ZIPFoundation #281 class of bug).
///
/// Normalization is lexical: `.` and empty components are dropped and `..` removes the previous
/// component; symlinks are not consulted.
enum LexicalPath {
    /// The normalized components of an absolute path; `..` above the root stays at the root.
    static func components(ofAbsolute path: String) -> [Substring] {
        var result: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": _ = result.popLast()
            default: result.append(part)
            }
        }
        return result
    }

    /// Whether `path` is relative and already normal: no empty, `.` or `..` component, no
    /// trailing slash. Then `directory + "/" + path` is its resolution, strictly inside
    /// `directory`, with no need to split either (the common case, worth it at 100,000 entries).
    static func isPlainRelative(_ path: String) -> Bool {
        var previous: UInt8 = UInt8(ascii: "/")  // as if after a slash: a leading "/" is empty
        var dots = 0  // dots since the last slash, -1 once anything else came
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if previous == UInt8(ascii: "/") || dots == 1 || dots == 2 { return false }
                dots = 0
            } else if byte == UInt8(ascii: "."), dots >= 0 {
                dots += 1
            } else {
                dots = -1
            }
            previous = byte
        }
        return !path.isEmpty && previous != UInt8(ascii: "/") && dots != 1 && dots != 2
    }

    /// `path` made absolute against `directory` (unless it already is) and normalized.
    static func resolve(_ path: String, against directory: String) -> String {
        let absolute = path.hasPrefix("/") ? path : directory + "/" + path
        return "/" + components(ofAbsolute: absolute).joined(separator: "/")
    }

    /// Whether `path` lies strictly inside `folder`, comparing whole components. Both absolute.
    static func isStrictlyInside(_ path: String, folder: String) -> Bool {
        let p = components(ofAbsolute: path)
        let f = components(ofAbsolute: folder)
        return p.count > f.count && Array(p.prefix(f.count)) == f
    }

    /// Whether `ancestor` is `path` itself or one of its parent folders. Both normalized absolute.
    static func isSelfOrAncestor(_ ancestor: String, of path: String) -> Bool {
        let a = components(ofAbsolute: ancestor)
        let p = components(ofAbsolute: path)
        return p.count >= a.count && Array(p.prefix(a.count)) == a
    }

    /// The folder part of a path (`"a/b.yml"` -> `"a"`, `"b.yml"` -> `"."`, `"/b.yml"` -> `"/"`).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = path[..<slash]
        return head.isEmpty ? "/" : String(head)
    }
}
