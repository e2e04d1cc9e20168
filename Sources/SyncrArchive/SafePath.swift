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

    /// Why a symbolic link's target is refused. Each says what is true of the target: an
    /// absolute link is refused whatever it points to (it points to the same place on every
    /// machine it is unpacked on, and inside the folder only where it was made), so calling it
    /// "outside" was wrong for one that named a file of the folder.
    public enum LinkProblem: Error, Equatable {
        case empty
        case nul
        case backslash
        case absolute
        /// Its leading `..` climb above the folder.
        case climbsOut
        /// A `..` after a name (`a/..`), which a link at that name could lead anywhere.
        case climbsAfterName

        /// What is wrong, for a message about `target`; `place` is what it must stay inside
        /// ("the destination", "the folder being zipped").
        public func detail(target: String, place: String) -> String {
            switch self {
            case .empty: "the link's target is empty"
            case .nul: "the link's target holds a NUL byte"
            case .backslash: "the link's target holds a backslash (\(target))"
            case .absolute: "an absolute link (\(target)): only relative links that stay inside \(place) are allowed"
            case .climbsOut: "the link points outside \(place) (\(target))"
            case .climbsAfterName:
                "the link's target goes back up with '..' after a name (\(target)), which another link could lead outside \(place)"
            }
        }
    }

    /// Whether a symbolic link stored at `linkComponents` pointing to `target` stays inside the
    /// destination (resolved lexically, component by component).
    public static func linkStaysInside(linkComponents: [String], target: String) -> Bool {
        linkProblem(linkComponents: linkComponents, target: target) == nil
    }

    /// Why a symbolic link stored at `linkComponents` pointing to `target` may leave the
    /// destination (resolved lexically, component by component); nil when it stays inside.
    ///
    /// A `..` is only allowed before the first name in `target`: lexically `a/..` is `.`, but if
    /// `a` is (or a later entry makes it) a link to a folder elsewhere, the kernel climbs from
    /// there. With `sub/a -> ..` (inside), `sub/b -> a/..` would resolve to the parent of the
    /// destination. Leading `..` climb from the link's own folder, which is a real folder, and
    /// names then only descend (through links that themselves point inside), so the whole
    /// chain stays inside.
    public static func linkProblem(linkComponents: [String], target: String) -> LinkProblem? {
        let bytes = target.utf8
        if bytes.isEmpty { return .empty }
        if bytes.contains(0) { return .nul }
        if bytes.contains(UInt8(ascii: "\\")) { return .backslash }
        if bytes.first == UInt8(ascii: "/") { return .absolute }
        var stack = Array(linkComponents.dropLast())
        var descended = false
        for part in split(target) {
            if isDot(part) { continue }
            if isDotDot(part) {
                if descended { return .climbsAfterName }
                if stack.isEmpty { return .climbsOut }
                stack.removeLast()
            } else {
                descended = true
                stack.append(part)
            }
        }
        return nil
    }

    /// Removes the first `count` components (like tar's `--strip-components`); nil when nothing
    /// is left, so the entry is skipped.
    public static func strip(_ components: [String], _ count: Int) -> [String]? {
        guard components.count > count else { return nil }
        return Array(components.dropFirst(count))
    }
}
