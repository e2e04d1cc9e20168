import Testing
@testable import SyncrCore
import SyncrManifest

/// Numbers a library caller passes are held to the manifest's limits, not trusted: `jobs:
/// Int.max` overflowed where apply counts its workers.
@Suite(.timeLimit(.minutes(5))) struct RunOptionLimitsTests {
    @Test func jobsAreHeldToTheManifestsRange() throws {
        let manifest = try ManifestLoader.parse(text: "version: 1\ndownloads: []\n", path: "/p/syncr.yml", directory: "/p",
                                                environment: [:])
        for (asked, held) in [(Int.max, 256), (0, 1), (-3, 1), (12, 12)] {
            let session = Session(manifest: manifest, options: RunOptions(jobs: asked))
            #expect(session.jobs == held, "\(asked)")
            session.close()
        }
        let result = ItemResult(item: PlanItem(index: 0, url: "u", to: "t", action: .download, size: nil, offset: 0,
                                               bytes: nil, reason: ""),
                                outcome: .ok, transferred: .max, seconds: 0, notes: [])
        #expect(ApplyReport(results: [result, result], seconds: 0).transferred == .max)
    }
}
