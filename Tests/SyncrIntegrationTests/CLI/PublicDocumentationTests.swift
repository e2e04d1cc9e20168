import Foundation
import Testing

/// Every public symbol of SyncrCore carries a `///` comment (STYLE.md), so the library can be
/// used from its declarations alone.
@Suite("public documentation", .timeLimit(.minutes(5)))
struct PublicDocumentationTests {
    /// Each `public` or `open` declaration in Sources/SyncrCore has a `///` line directly above
    /// it (attributes such as `@discardableResult` may stand between).
    @Test func everyPublicDeclarationOfSyncrCoreHasADocComment() throws {
        let folder = repositoryRoot().appendingPathComponent("Sources/SyncrCore")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".swift") }.sorted()
        var missing: [String] = []
        var declarations = 0
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            declarations += DocCommentCheck.declarationLines(in: text).count
            missing += DocCommentCheck.undocumented(in: text).map { "Sources/SyncrCore/\(name):\($0)" }
        }
        #expect(missing.isEmpty, "add a /// comment above:\n\(missing.joined(separator: "\n"))")
        #expect(names.count > 20 && declarations > 100, "the sources were found (\(names.count) files, \(declarations) public declarations)")
    }

    /// The check itself: it names the lines of undocumented declarations and accepts documented
    /// ones, with or without attributes between.
    @Test func theCheckFindsWhatLacksAComment() {
        let source = """
            /// A documented type.
            public struct Documented {
                public var bare: Int
                /// A documented property.
                public var documented: Int
                // A plain comment is not documentation.
                public init() {}
                /// Documented, with an attribute between.
                @discardableResult
                public func attributed() -> Int { 0 }
                @inlinable
                public func attributedBare() {}
                var internalOne = 0
                open func bareOpen() {}
            }
            public enum Bare {}
            """
        #expect(DocCommentCheck.undocumented(in: source) == [3, 7, 12, 14, 16])
        #expect(DocCommentCheck.declarationLines(in: source) == [2, 3, 5, 7, 10, 12, 14, 16])
    }
}

/// Finds public and open declarations without a `///` comment in Swift source text.
enum DocCommentCheck {
    /// 1-based lines whose declaration starts with `public` or `open`.
    static func declarationLines(in source: String) -> [Int] {
        let lines = lines(source)
        return lines.indices.filter { isDeclaration(lines[$0]) }.map { $0 + 1 }
    }

    /// 1-based lines of declarations whose nearest line above, skipping attribute lines, is not a
    /// `///` comment.
    static func undocumented(in source: String) -> [Int] {
        let lines = lines(source)
        return lines.indices.filter { index in
            guard isDeclaration(lines[index]) else { return false }
            var above = index - 1
            while above >= 0, trimmed(lines[above]).hasPrefix("@") { above -= 1 }
            return above < 0 || !trimmed(lines[above]).hasPrefix("///")
        }.map { $0 + 1 }
    }

    private static func lines(_ source: String) -> [Substring] {
        source.split(separator: "\n", omittingEmptySubsequences: false)
    }

    private static func trimmed(_ line: Substring) -> Substring {
        line.drop { $0 == " " || $0 == "\t" }
    }

    private static func isDeclaration(_ line: Substring) -> Bool {
        let text = trimmed(line)
        return text.hasPrefix("public ") || text.hasPrefix("open ")
    }
}
