import Testing
@testable import SyncrCore

/// A plan item is a value: a copy changed later leaves the original as it was, also for the
/// fields it keeps apart (`error`, `uploadContext`).
@Suite(.timeLimit(.minutes(10))) struct PlanItemTests {
    @Test func copiesKeepTheirOwnError() {
        var item = PlanItem(index: 0, url: "http://h/f", to: "f", action: .download, size: nil, offset: 0, bytes: nil, reason: "")
        #expect(item.error == nil)
        item.error = .other(message: "first")
        var copy = item
        copy.error = .other(message: "second")
        #expect(item.error == .other(message: "first"))
        #expect(copy.error == .other(message: "second"))
        copy.error = nil
        #expect(copy.error == nil)
        #expect(item.error == .other(message: "first"))
        #expect(item.uploadContext == nil)
    }
}
