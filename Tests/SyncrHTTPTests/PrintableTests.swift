import Testing
@testable import SyncrHTTP

@Suite("HTTPResponse.printable", .timeLimit(.minutes(10)))
struct PrintableTests {
    static func p(_ s: String, limit: Int = 300) -> String {
        HTTPResponse.printable(Array(s.utf8), limit: limit)
    }

    @Test("control characters become spaces and white space folds", arguments: [
        ("hello", "hello"),
        ("hello\r\nworld", "hello world"),
        ("a\tb", "a b"),
        ("a \t\r\n  b", "a b"),
        ("\u{0}\u{1}abc\u{7F}def\u{1B}[31m", "abc def [31m"),
        ("a\u{85}b", "a b"),                           // C1 control (NEL)
        ("a\u{9F}b", "a b"),
        ("   leading and trailing   ", "leading and trailing"),
        ("\n\n<html>\n  <body>Not Found</body>\n</html>\n", "<html> <body>Not Found</body> </html>"),
        ("", ""),
        ("\r\n\t \u{0}", ""),
        ("café ünïcode ✓", "café ünïcode ✓"),           // printable non-ASCII is kept
        ("a\u{A0}b", "a\u{A0}b"),                      // NBSP is not a control character
    ])
    func cleans(_ input: String, _ expected: String) {
        #expect(Self.p(input) == expected)
    }

    @Test("invalid UTF-8 is replaced, not dropped or crashed on")
    func invalidUTF8() {
        #expect(HTTPResponse.printable([0x41, 0xFF, 0x42]) == "A\u{FFFD}B")
        #expect(HTTPResponse.printable([0xC3]) == "\u{FFFD}")
    }

    @Test("long text is cut at the limit and marked with an ellipsis")
    func cutsAtLimit() {
        let long = String(repeating: "x", count: 1_000)
        let out = Self.p(long)
        #expect(out == String(repeating: "x", count: 300) + "…")

        #expect(Self.p("abcdef", limit: 3) == "abc…")
        #expect(Self.p("éééééé", limit: 3) == "ééé…")      // counted in characters, not bytes
        #expect(Self.p("a\n\n\nbcdef", limit: 3) == "a b…")  // folded spaces count once
    }

    @Test("the default limit is 300 characters")
    func defaultLimit() {
        let out = HTTPResponse.printable(Array(String(repeating: "y", count: 301).utf8))
        #expect(out.hasSuffix("…"))
        #expect(out.dropLast().count == 300)
    }

    @Test("text shorter than the limit is not marked as cut")
    func shortNotCut() {
        #expect(Self.p("abc", limit: 4) == "abc")
        #expect(Self.p(String(repeating: "z", count: 299)) == String(repeating: "z", count: 299))
    }

    // Regression (fixed; HTTPResponse.swift, printable): the limit test runs right after each character is
    // appended, so text of exactly `limit` characters (or that reaches the limit with a folded
    // space and then only white space) gets "…" although nothing was cut.
    @Test("text of exactly the limit is not marked as cut",
          arguments: [
              ("abc", 3, "abc"),
              ("ab \n\t ", 3, "ab"),
              (String(repeating: "x", count: 300), 300, String(repeating: "x", count: 300)),
          ])
    func exactLimitNotCut(_ input: String, _ limit: Int, _ expected: String) {
        #expect(Self.p(input, limit: limit) == expected)
    }
}
