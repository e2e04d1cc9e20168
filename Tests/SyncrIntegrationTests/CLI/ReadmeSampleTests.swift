import Foundation
import Testing

/// The README's console samples are what syncr prints, so they cannot drift from it. Each sample
/// is the fenced block after a `<!-- sample: NAME -->` comment. To write them afresh from the
/// program: `SYNCR_UPDATE_README=1 swift test --filter ReadmeSampleTests` (or `scripts/readme-samples`).
@Suite("README samples", .timeLimit(.minutes(5)))
struct ReadmeSampleTests {
    static var readme: URL { repositoryRoot().appendingPathComponent("README.md") }

    /// `syncr plan` against nginx for three files of fixed sizes, one of them already fetched.
    @Test func planSampleIsWhatSyncrPrints() async throws {
        let www = try TemporaryDirectory(prefix: "readme-www")
        try www.makeDirectory("releases")
        try makeFile(path: www.appending("releases/model.bin"), size: 12 << 20, seed: 41)
        try makeFile(path: www.appending("releases/readme.txt"), size: 85_604, seed: 42)
        try makeFile(path: www.appending("releases/labels.csv"), size: 24_170, seed: 43)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        let entries = [("model.bin", "vendor/model.bin"), ("readme.txt", "docs/readme.txt"),
                       ("labels.csv", "data/labels.csv")].map { "{ url: \(nginx.url("/releases/\($0.0)")), to: \($0.1) }" }
        try project.writeManifest(downloads: [entries[1]])
        let first = try await project.run(["apply", "--quiet"])
        try #require(first.exitCode == 0, "\(first.stderr)")
        try project.writeManifest(downloads: entries)
        let plan = try await project.run(["plan"])
        try #require(plan.exitCode == 0, "\(plan.stderr)")
        try check(sample: "plan", console: "$ syncr plan\n" + plan.stdout)
    }

    /// Compares the README's sample with `console`, or writes it there with SYNCR_UPDATE_README=1.
    func check(sample name: String, console: String) throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let marker = "<!-- sample: \(name) -->\n```console\n"
        let start = try #require(text.range(of: marker), "README.md has no `\(marker)` block")
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let shown = String(text[start.upperBound..<end.lowerBound])
        let actual = console.trimmingCharacters(in: .newlines)
        if ProcessInfo.processInfo.environment["SYNCR_UPDATE_README"] == "1" {
            try text.replacingCharacters(in: start.upperBound..<end.lowerBound, with: actual)
                .write(to: Self.readme, atomically: true, encoding: .utf8)
            return
        }
        #expect(shown == actual, "README.md's `\(name)` sample differs from syncr's output; run scripts/readme-samples")
    }
}
