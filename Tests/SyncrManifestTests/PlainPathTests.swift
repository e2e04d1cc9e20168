@testable import SyncrManifest
import Testing

/// The fast path of `to:` resolution: a path it calls plain must resolve exactly as the full
/// normalization does, strictly inside the folder; anything it is unsure of takes the full way.
@Suite(.timeLimit(.minutes(10))) struct PlainPathTests {
    @Test(arguments: ["a", "a/b.bin", "data/000/f1.bin", "...", "a/.../b", ".hidden", "a/.b", "é/ü.bin", "a b/c"])
    func plainPathsResolveAsTheFullWayDoes(path: String) {
        #expect(LexicalPath.isPlainRelative(path))
        let directory = "/work/project"
        #expect(LexicalPath.resolve(path, against: directory) == directory + "/" + path)
        #expect(LexicalPath.isStrictlyInside(directory + "/" + path, folder: directory))
    }

    @Test(arguments: ["", "/abs", "a/", "a//b", ".", "..", "./a", "a/./b", "a/..", "../x", "a/../../x", "a/../b"])
    func anythingElseTakesTheFullWay(path: String) {
        #expect(!LexicalPath.isPlainRelative(path))
    }
}
