/// A path compared and hashed by its bytes, as the kernel names files: `String` equality is
/// Unicode's, under which `café` composed and decomposed are one key, and on Linux they are two
/// files (or folders). Holds the string itself: a key costs no copy of its bytes.
struct PathKey: Hashable, Sendable {
    let path: String

    init(_ path: String) {
        self.path = path
    }

    static func == (a: PathKey, b: PathKey) -> Bool {
        a.path.utf8.count == b.path.utf8.count && a.path.utf8.elementsEqual(b.path.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var path = path
        path.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
