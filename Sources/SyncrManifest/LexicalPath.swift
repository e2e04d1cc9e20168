/// POSIX paths handled as lists of components, never as string prefixes: `/a/bc` is not inside
/// `/a/b`, and `//..` cannot escape a folder (the ZIPFoundation #281 class of bug).
///
/// Normalization is lexical: `.` and empty components are dropped and `..` removes the previous
/// component; symlinks are not consulted.
enum LexicalPath {
    /// The normalized components of an absolute path; `..` above the root stays at the root.
    static func components(ofAbsolute path: String) -> [Substring] {
        var result: [Substring] = []
        // Byte by byte: `/` and `.` are ASCII, never part of a longer UTF-8 sequence, and a
        // manifest of 100,000 entries resolves every destination (Character splitting was a
        // fifth of `validate`).
        let utf8 = path.utf8
        var start = utf8.startIndex
        var index = start
        func take(_ end: String.Index) {
            let part = path[start..<end]
            let bytes = part.utf8
            let dots = bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") }
            switch dots ? bytes.count : -1 {
            case 0, 1: break
            case 2: _ = result.popLast()
            default: result.append(part)
            }
        }
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                take(index)
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        take(index)
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

    /// `isStrictlyInside` for paths already normalized (as `resolve` returns them): a byte
    /// comparison, since normalized paths that share components share their bytes.
    static func isStrictlyInside(normalized path: String, folder: String) -> Bool {
        let p = path.utf8, f = folder.utf8
        if f.count == 1 { return p.count > 1 }  // the root
        return p.count > f.count + 1 && p.starts(with: f) && p[p.index(p.startIndex, offsetBy: f.count)] == UInt8(ascii: "/")
    }

    /// Whether `ancestor` is `path` itself or one of its parent folders. Both normalized absolute.
    static func isSelfOrAncestor(_ ancestor: String, of path: String) -> Bool {
        let a = components(ofAbsolute: ancestor)
        let p = components(ofAbsolute: path)
        return p.count >= a.count && Array(p.prefix(a.count)) == a
    }

    /// The folder part of a path (`"a/b.yml"` -> `"a"`, `"b.yml"` -> `"."`, `"/b.yml"` -> `"/"`).
    /// The last `/` is found among the bytes, as the system splits paths; looked for among
    /// Characters, a walk that breaks graphemes cost 3,500 instructions a destination.
    static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let head = path[..<slash]
        return head.isEmpty ? "/" : String(head)
    }
}
