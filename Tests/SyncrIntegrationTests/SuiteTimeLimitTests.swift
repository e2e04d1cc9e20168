import Foundation
import Testing

/// Every test has a time limit, so a hang fails naming the test instead of stalling the run.
@Suite("suite time limits", .timeLimit(.minutes(5)))
struct SuiteTimeLimitTests {
    /// Each top-level type with tests in it is a `@Suite` with a `.timeLimit` (nested suites and
    /// extensions inherit it), and each top-level test function has one of its own.
    @Test func everySuiteAndTopLevelTestHasATimeLimit() throws {
        // <root>/Tests/SyncrIntegrationTests/SuiteTimeLimitTests.swift
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let names = (FileManager.default.enumerator(atPath: tests.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }
        let sources = try names.map { ($0, try String(contentsOfFile: tests.path + "/" + $0, encoding: .utf8)) }
        let missing = TimeLimitCheck.missing(in: sources)
        #expect(missing.isEmpty, "add .timeLimit(.minutes(N)) to:\n\(missing.joined(separator: "\n"))")
        #expect(sources.count > 50, "the test sources were found")
    }

    /// No limit under 5 minutes. A limit counts from when the test gets one of the run's slots
    /// (`scripts/test-width`), but a test that has one still shares 2 cores with every other
    /// test that has one, their servers and their syncr runs: under ThreadSanitizer on a loaded
    /// host a test has taken 1 to 3 minutes that alone takes seconds. (Without the bound, every
    /// test started at once and its limit counted the whole run: every test with a 5-minute limit
    /// failed once the run took longer.)
    @Test func noLimitIsShorterThanAFullRunCanStall() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let names = (FileManager.default.enumerator(atPath: tests.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") && !$0.hasSuffix("SuiteTimeLimitTests.swift") }
        var short: [String] = []
        for name in names {
            let text = try String(contentsOfFile: tests.path + "/" + name, encoding: .utf8)
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                guard let range = line.range(of: ".timeLimit(.minutes(") else { continue }
                let digits = line[range.upperBound...].prefix { $0.isNumber }
                if let minutes = Int(digits), minutes < 5 { short.append("\(name):\(number + 1)") }
            }
        }
        #expect(short.isEmpty, "raise to at least .minutes(5):\n\(short.joined(separator: "\n"))")
    }

    /// The check itself, on sources that break the rule and sources that keep it.
    @Test func theCheckFindsWhatLacksALimit() {
        let bad = """
            import Testing
            struct Implicit {
                @Test func a() {}
            }
            @Suite("named") struct Named {
                @Test func b() {}
            }
            \("@")Test func topLevel() {}
            """
        let good = """
            @Suite("x", .serialized,
                   .timeLimit(.minutes(5)))
            struct Limited {
                struct Nested {
                    @Test func c() {}
                }
            }
            extension Limited {
                @Test func d() {}
            }
            \("@")Test(.timeLimit(.minutes(1)))
            func topLevel() {}
            """
        #expect(TimeLimitCheck.missing(in: [("bad.swift", bad), ("good.swift", good)])
                == ["bad.swift:2: Implicit", "bad.swift:5: Named", "bad.swift:8: top-level test"])
    }
}

/// Reads test sources the way the rule needs: column-0 declarations, their attributes above
/// (possibly over several lines) and the `@Test`s inside them.
enum TimeLimitCheck {
    static func missing(in sources: [(name: String, text: String)]) -> [String] {
        var limited: Set<String> = []
        var pending: [(where: String, type: String)] = []
        var problems: [String] = []
        for (name, text) in sources {
            let lines = text.components(separatedBy: "\n")
            var current: (line: Int, type: String, limited: Bool, isExtension: Bool, reported: Bool)?
            for (index, line) in lines.enumerated() {
                if let declared = declaration(line) {
                    let attributes = attributeText(lines, above: index) + line
                    let hasLimit = attributes.contains("@Suite") && attributes.contains(".timeLimit(")
                    if hasLimit && !declared.isExtension { limited.insert(declared.type) }
                    current = (index + 1, declared.type, hasLimit, declared.isExtension, false)
                    continue
                }
                if line.hasPrefix("}") { current = nil; continue }
                guard line.trimmingCharacters(in: .whitespaces).hasPrefix("@Test") else { continue }
                if !line.hasPrefix(" ") {
                    let end = lines[index...].firstIndex { $0.contains("func ") } ?? index
                    if !lines[index...end].joined().contains(".timeLimit(") {
                        problems.append("\(name):\(index + 1): top-level test")
                    }
                    continue
                }
                guard var type = current, !type.limited, !type.reported else { continue }
                type.reported = true
                current = type
                if type.isExtension {
                    pending.append(("\(name):\(type.line)", type.type))
                } else {
                    problems.append("\(name):\(type.line): \(type.type)")
                }
            }
        }
        problems += pending.filter { !limited.contains($0.type) }.map { "\($0.where): extension \($0.type)" }
        return problems
    }

    /// A type declared at column 0 (after any attributes on the same line).
    static func declaration(_ line: String) -> (type: String, isExtension: Bool)? {
        let range = NSRange(line.startIndex..., in: line)
        guard let match = declarationPattern.firstMatch(in: line, range: range),
              let keyword = Range(match.range(at: 1), in: line), let name = Range(match.range(at: 2), in: line)
        else { return nil }
        return (String(line[name]), line[keyword] == "extension")
    }

    private static let declarationPattern = try! NSRegularExpression(
        pattern: #"^(?:@.*\)\s+|@\w+\s+)*(?:(?:public|internal|private|fileprivate|final)\s+)*(struct|class|enum|actor|extension)\s+(\w+)(?=\s*[{<:]|\s+where\s)"#)

    /// The attribute lines right above a declaration (`@...` and their indented continuations).
    static func attributeText(_ lines: [String], above index: Int) -> String {
        var text = ""
        var cursor = index - 1
        while cursor >= 0, lines[cursor].hasPrefix("@") || lines[cursor].hasPrefix(" ") && !lines[cursor].trimmingCharacters(in: .whitespaces).isEmpty {
            text = lines[cursor] + "\n" + text
            cursor -= 1
        }
        return text
    }
}
