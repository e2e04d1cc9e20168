import Testing
@testable import syncr
@testable import SyncrCore

/// The plan's summary line counts each side's sizes on its own side: a zipped folder (its size
/// known only once zipped) is not a download of unknown size.
@Suite(.timeLimit(.minutes(5)))
struct PlanSummaryTests {
    @Test func unknownSizesAreCountedOnTheirOwnSide() {
        let plan = Plan(items: [
            PlanItem(index: 0, url: "http://h/a", to: "a", action: .download, size: 116, offset: 0, bytes: 116, reason: ""),
            PlanItem(index: 1, url: "http://h/b", to: "b", action: .download, size: nil, offset: 0, bytes: nil, reason: ""),
            PlanItem(kind: .upload, index: 0, url: "http://h/up", to: "", action: .upload, size: 2, offset: 0, bytes: 2, reason: ""),
            PlanItem(kind: .upload, index: 1, url: "http://h/zip", to: "", action: .upload, size: nil, offset: 0, bytes: nil,
                     reason: ""),
        ])
        let text = Rendering.planSummary(plan, manifest: "syncr.yml")
        #expect(text.hasSuffix("; 116 B (116 bytes) to fetch plus 1 of unknown size, 2 B (2 bytes) to send plus 1 of unknown size."),
                "\(text)")
        let zipOnly = Plan(items: [plan.items[3]])
        #expect(Rendering.planSummary(zipOnly, manifest: "syncr.yml").hasSuffix("; 0 B (0 bytes) to fetch, 0 B (0 bytes) to send plus 1 of unknown size."))
    }
}
