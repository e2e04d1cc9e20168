import Foundation
import Testing

/// `syncr init` writes a starter manifest that validates as written, and never replaces one.
@Suite(.timeLimit(.minutes(5)))
struct InitTests {
    @Test func writesAManifestThatValidatesAsWritten() async throws {
        let harness = try CLIHarness()
        let r = try await harness.run(["init"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote syncr.yml"))
        let text = try String(contentsOfFile: harness.folder + "/syncr.yml", encoding: .utf8)
        #expect(text.contains("version: 1"))
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("#") }, "the starter is commented")
        // No variable outside comments: it must validate in any environment.
        for line in text.split(separator: "\n") where !line.drop(while: { $0 == " " }).hasPrefix("#") {
            #expect(!line.contains("${"), "'\(line)' needs no environment variable")
        }

        let v = try await harness.run(["validate"])
        #expect(v.status == 0, "\(v.stderr)")
        #expect(v.stdout == "syncr.yml: valid (1 download, 0 uploads)\n")
        // What a hand edit usually does first: uncomment the commented entries. They validate too
        // (given the variables they name).
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let body = line.drop(while: { $0 == " " })
            guard body.hasPrefix("# - ") || body.hasPrefix("#   ") || body.hasPrefix("# uploads:") else { return String(line) }
            let indent = line.prefix(while: { $0 == " " })
            return String(indent) + String(body.dropFirst(2))
        }.joined(separator: "\n")
        try harness.write("uncommented.yml", uncommented)
        let u = try await harness.run(["validate", "uncommented.yml"],
                                      environment: ["ARTIFACT_TOKEN": "dummy-a", "UPLOAD_TOKEN": "dummy-u"])
        #expect(u.status == 0, "uncommented starter:\n\(uncommented)\n\(u.stderr)")
        #expect(u.stdout.contains("valid (3 downloads, 1 upload)"), "\(u.stdout)")
    }

    @Test func refusesToOverwrite() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "keep: me\n")
        let r = try await harness.run(["init"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("syncr.yml already exists"))
        #expect(r.stdout.isEmpty)
        #expect(try String(contentsOfFile: harness.folder + "/syncr.yml", encoding: .utf8) == "keep: me\n")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: harness.folder).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func writesTheNamedFile() async throws {
        let harness = try CLIHarness()
        try harness.write("syncr.yml", "keep: me\n")
        let r = try await harness.run(["init", "other.yml"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("then 'syncr plan other.yml' and 'syncr apply other.yml'"), "\(r.stderr)")
        let v = try await harness.run(["validate", "--quiet", "other.yml"])
        #expect(v.status == 0)
        #expect(try String(contentsOfFile: harness.folder + "/syncr.yml", encoding: .utf8) == "keep: me\n")
        // A second init of the same name is refused too.
        let again = try await harness.run(["init", "other.yml"])
        #expect(again.status == 1)
    }

    /// A folder names where the manifest goes, as `git init DIR` does: it was taken for a
    /// manifest that "already exists". The commands to run next name the file.
    @Test func aFolderGetsSyncrYmlInIt() async throws {
        let harness = try CLIHarness()
        try FileManager.default.createDirectory(atPath: harness.folder + "/project", withIntermediateDirectories: true)
        for (argument, written) in [("project", "project/syncr.yml"), ("other/", "other/syncr.yml")] {
            if argument == "other/" {
                try FileManager.default.createDirectory(atPath: harness.folder + "/other", withIntermediateDirectories: true)
            }
            let r = try await harness.run(["init", argument])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("wrote \(written); check it with 'syncr validate \(written)', then 'syncr plan \(written)' "
                + "and 'syncr apply \(written)'"), "\(r.stderr)")
            let v = try await harness.run(["validate", "--quiet", written])
            #expect(v.status == 0, "\(v.stderr)")
        }
        let again = try await harness.run(["init", "project"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("project/syncr.yml already exists"), "\(again.stderr)")
        // A name a shell would split is quoted in the commands suggested.
        let spaced = try await harness.run(["init", "my $dir.yml"])
        #expect(spaced.stderr.contains("then 'syncr plan \"my \\$dir.yml\"' and"), "\(spaced.stderr)")
    }

    @Test func namesTheFolderThatIsMissing() async throws {
        let r = try await CLIHarness().run(["init", "no/such/folder/syncr.yml"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no/such/folder/syncr.yml"))
        #expect(r.stderr.contains("No such file or directory"))
    }

    @Test func takesOneFileName() async throws {
        let r = try await CLIHarness().run(["init", "a.yml", "b.yml"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unexpected argument 'b.yml'"))
    }
}
