import Foundation
import Testing

/// Every manifest under examples/ validates, with a dummy value for each variable it needs, and
/// says (in its comments or its README) which variables those are.
@Suite(.timeLimit(.minutes(5)))
struct ExamplesTests {
    static let examples: [String] = {
        let folder = DocsRepository.root + "/examples"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }.sorted()
    }()

    /// The `${VAR}` references without a default in the manifest's YAML (comments left out).
    static func requiredVariables(_ text: String) -> [String] {
        var names: Set<String> = []
        for line in text.split(separator: "\n") where !line.drop(while: { $0 == " " }).hasPrefix("#") {
            var rest = line[...]
            while let start = rest.range(of: "${") {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "}") else { break }
                let reference = rest[..<end]
                if !reference.contains(":-") { names.insert(String(reference)) }
                rest = rest[end...]
            }
        }
        return names.sorted()
    }

    @Test func theDocumentedExamplesExist() {
        for name in ["quickstart", "ci-artifacts", "cron", "github-actions", "kubernetes", "kubernetes-indexed-job", "gitlab-parallel", "github-actions-matrix", "s3-artifacts"] {
            #expect(Self.examples.contains(name), "examples/\(name)")
        }
        #expect(FileManager.default.fileExists(atPath: DocsRepository.root + "/examples/cron/crontab"))
        #expect(FileManager.default.fileExists(atPath: DocsRepository.root + "/examples/github-actions/workflow.yml"))
        #expect(FileManager.default.fileExists(atPath: DocsRepository.root + "/examples/kubernetes/cronjob.yaml"))
    }

    @Test(arguments: examples)
    func exampleValidates(name: String) async throws {
        let path = DocsRepository.root + "/examples/\(name)/syncr.yml"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let variables = Self.requiredVariables(text)
        var environment: [String: String] = [:]
        for variable in variables { environment[variable] = "dummy-\(variable.lowercased())-value" }

        let r = try await CLIHarness().run(["validate", path], environment: environment)
        #expect(r.status == 0, "examples/\(name)/syncr.yml:\n\(r.stderr)")
        #expect(r.stdout.contains(": valid ("))
        for value in environment.values {
            #expect(!r.allOutput.contains(value), "a variable's value is never printed")
        }

        // Whoever copies the example learns which variables to set.
        let comments = text.split(separator: "\n").filter { $0.drop(while: { $0 == " " }).hasPrefix("#") }.joined(separator: "\n")
        let readme = (try? String(contentsOfFile: DocsRepository.root + "/examples/\(name)/README.md", encoding: .utf8)) ?? ""
        for variable in variables {
            #expect(comments.contains(variable) || readme.contains(variable),
                    "examples/\(name) says that it needs \(variable)")
        }
    }

    @Test func requiredVariablesSkipsDefaultsAndComments() {
        let text = """
        # ${IN_A_COMMENT}
        url: https://x/${HOST}/${PATH:-a}?t=${TOKEN}
        """
        #expect(Self.requiredVariables(text) == ["HOST", "TOKEN"])
    }
}
