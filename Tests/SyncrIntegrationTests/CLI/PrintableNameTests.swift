import Testing
@testable import syncr
@testable import SyncrCore

/// Names reach the terminal with their control characters written out: an object's key or a
/// manifest's `to:` holding an escape sequence must not drive the terminal, nor a newline split
/// a CI log's line.
@Suite(.timeLimit(.minutes(5)))
struct PrintableNameTests {
    @Test(arguments: [
        ("out/a.bin", "out/a.bin"),
        ("out/é ü.bin", "out/é ü.bin"),
        ("out/a\u{1B}[2Jb.bin", "out/a\\u{1B}[2Jb.bin"),
        ("line\nbreak\ttab", "line\\u{A}break\\u{9}tab"),
        ("del\u{7F}c1\u{9B}", "del\\u{7F}c1\\u{9B}"),
    ])
    func controlCharactersAreWrittenOut(_ name: String, _ shown: String) {
        #expect(Rendering.printable(name) == shown)
        let item = PlanItem(index: 0, url: "http://h/f", to: name, action: .download, size: nil, offset: 0, bytes: nil, reason: "")
        #expect(Rendering.name(item) == shown)
    }
}
