/// Turns an archive entry's name into path components that stay inside the destination, or
/// says why it cannot.
///
/// Checked component by component, never by string prefix (a prefix check is escaped by names
/// like `a//../..`): absolute paths, `..`, drive letters, backslashes and NUL are refused; empty
/// and `.` components are dropped.
public enum SafePath {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case empty
        case absolute
        case parent
        case driveLetter
        case backslash
        case nul
        case tooDeep
        case tooLong

        public var description: String {
            switch self {
            case .empty: return "the name is empty"
            case .absolute: return "absolute paths are not allowed"
            case .parent: return "'..' would leave the destination"
            case .driveLetter: return "drive letters are not allowed"
            case .backslash: return "backslashes are not allowed in names"
            case .nul: return "a NUL byte in the name"
            case .tooDeep: return "the path is nested too deep"
            case .tooLong: return "a path component is longer than 255 bytes"
            }
        }
    }

    /// The components of a relative, contained path.
    /// - Parameter name: the name as stored (`/`-separated; a trailing `/` marks a folder).
    public static func components(_ name: String) throws(Problem) -> [String] {
        if name.utf8.contains(0) { throw .nul }
        if name.contains("\\") { throw .backslash }
        if name.hasPrefix("/") { throw .absolute }
        let parts = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if let first = parts.first, first.count >= 2, first.dropFirst().first == ":",
           first.first.map({ $0.isLetter }) == true {
            throw .driveLetter
        }
        var result: [String] = []
        for part in parts {
            if part == "." { continue }
            if part == ".." { throw .parent }
            if part.utf8.count > 255 { throw .tooLong }
            result.append(part)
        }
        if result.isEmpty { throw .empty }
        if result.count > 128 { throw .tooDeep }
        return result
    }

    /// Whether a symbolic link stored at `linkComponents` pointing to `target` stays inside the
    /// destination (resolved lexically, component by component).
    ///
    /// A `..` may only climb out of the link's own folders, which the extraction created as real
    /// folders; it may not follow a component the target itself named, because that component
    /// can be another link from the same archive, and the kernel resolves `..` after the link:
    /// with `y -> .`, the target `y/..` looks like the destination itself lexically but is its
    /// parent on disk. So `a/../b` is refused, `../b` (from a subfolder) and `a/b` are not.
    public static func linkStaysInside(linkComponents: [String], target: String) -> Bool {
        if target.isEmpty || target.hasPrefix("/") || target.utf8.contains(0) || target.contains("\\") { return false }
        var stack = Array(linkComponents.dropLast())
        var namedByTarget = false
        for part in target.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                if stack.isEmpty || namedByTarget { return false }
                stack.removeLast()
            } else {
                stack.append(String(part))
                namedByTarget = true
            }
        }
        return true
    }

    /// Removes the first `count` components (like tar's `--strip-components`); nil when nothing
    /// is left, so the entry is skipped.
    public static func strip(_ components: [String], _ count: Int) -> [String]? {
        guard components.count > count else { return nil }
        return Array(components.dropFirst(count))
    }
}
