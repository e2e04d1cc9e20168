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

    /// A key listed from a bucket, or a server's words, may hold an escape sequence or a line
    /// break: lines show them escaped, as they show names (a listed key coloured the terminal
    /// and forged a log line).
    @Test func urlsAndErrorsAreShownWithControlCharactersEscaped() {
        let lines = EntryLines(palette: Palette(enabled: false), entryCount: 1)
        let item = PlanItem(index: 0, url: "s3://b/p/nl\nINJECTED", to: "out/x", action: .download, size: nil, offset: 0,
                            bytes: nil, reason: "")
        #expect(lines.started(item, number: 1) == "[1/1] download out/x from s3://b/p/nl\\u{A}INJECTED")
        let failed = ItemResult(item: item, outcome: .failed(.other(message: "key \u{1B}[31mRED")), transferred: 0,
                                seconds: 0, notes: [])
        #expect(lines.finished(failed) == "  FAILED out/x: key \\u{1B}[31mRED")
    }
}
