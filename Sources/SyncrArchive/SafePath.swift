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

    /// `path`'s components between `/` bytes, empty ones left out.
    ///
    /// On bytes, as the kernel reads a path: `String.split` and `==` work on Characters, and a
    /// `/` followed by a combining mark (`../\u{301}x`), or after a prepended one (`x\u{600}/..`),
    /// is part of a larger Character, so a Character-wise check saw one harmless component where
    /// `open` climbs out of the destination.
    public static func split(_ path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether a first component reads as a Windows drive: an ASCII letter, then a colon.
    static func looksLikeDrive(_ part: String) -> Bool {
        let bytes = part.utf8
        guard bytes.count >= 2, bytes.dropFirst().first == UInt8(ascii: ":"), let letter = bytes.first else { return false }
        return (letter | 0x20) >= UInt8(ascii: "a") && (letter | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether a component is `.` or `..`, byte for byte.
    static func isDot(_ part: String) -> Bool { part.utf8.elementsEqual([0x2E]) }
    static func isDotDot(_ part: String) -> Bool { part.utf8.elementsEqual([0x2E, 0x2E]) }

    /// The components of a relative, contained path.
    /// - Parameter name: the name as stored (`/`-separated; a trailing `/` marks a folder).
    public static func components(_ name: String) throws(Problem) -> [String] {
        let bytes = name.utf8
        if bytes.contains(0) { throw .nul }
        if bytes.contains(UInt8(ascii: "\\")) { throw .backslash }
        if bytes.first == UInt8(ascii: "/") { throw .absolute }
        let parts = split(name)
        if let first = parts.first, looksLikeDrive(first) { throw .driveLetter }
        var result: [String] = []
        for part in parts {
            if isDot(part) { continue }
            if isDotDot(part) { throw .parent }
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
    /// A `..` is only allowed before the first name in `target`: lexically `a/..` is `.`, but if
    /// `a` is (or a later entry makes it) a link to a folder elsewhere, the kernel climbs from
    /// there. With `sub/a -> ..` (inside), `sub/b -> a/..` would resolve to the parent of the
    /// destination. Leading `..` climb from the link's own folder, which is a real folder, and
    /// names then only descend (through links that themselves point inside), so the whole
    /// chain stays inside.
    public static func linkStaysInside(linkComponents: [String], target: String) -> Bool {
        let bytes = target.utf8
        if bytes.isEmpty || bytes.first == UInt8(ascii: "/") || bytes.contains(0) || bytes.contains(UInt8(ascii: "\\")) {
            return false
        }
        var stack = Array(linkComponents.dropLast())
        var descended = false
        for part in split(target) {
            if isDot(part) { continue }
            if isDotDot(part) {
                if stack.isEmpty || descended { return false }
                stack.removeLast()
            } else {
                descended = true
                stack.append(part)
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
