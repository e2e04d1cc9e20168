import Testing
@testable import syncr
@testable import SyncrCore

/// A retry line counts the retries used; an attempt that got further uses none, and its line
/// says the entry goes on rather than "retry #0" (a server that drops every few KiB gave a
/// hundred of those).
@Suite(.timeLimit(.minutes(5)))
struct RetryLineTests {
    @Test func anAttemptThatGotFurtherIsAResumeNotRetryZero() {
        let lines = EntryLines(palette: Palette(enabled: false), entryCount: 1)
        let error = SyncError.connection(url: "http://h/f", code: 18, message: "closed", retries: .notRetried)
        let resumed = lines.retrying("out/f", attempt: 0, delay: 0, error: error)
        #expect(resumed == "  resume of out/f in 0.0 s (it got further: no retry used): http://h/f: connection failed: closed")
        #expect(lines.retrying("out/f", attempt: 2, delay: 1.5, error: error).hasPrefix("  retry #2 of out/f in "))
    }
}
