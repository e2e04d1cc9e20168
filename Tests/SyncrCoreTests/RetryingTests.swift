import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// The one retry loop, driven by scripted attempts (no sockets): each test names the server
/// behaviour its script stands for.
@Suite(.timeLimit(.minutes(10)))
struct RetryingTests {
    /// Records the `.retrying` events the loop reports.
    final class Events: ProgressReporter, @unchecked Sendable {
        // @unchecked: the loop reports from the test's own task only.
        var retries: [(attempt: Int, error: SyncError)] = []
        func report(_ event: ProgressEvent) {
            if case .retrying(_, let attempt, _, let error, _, _) = event { retries.append((attempt, error)) }
        }
    }

    func loop(retries: Int, _ events: Events = Events()) -> Retrying {
        // Backoff of a millisecond: the tests count attempts, they do not wait for them.
        Retrying(retries: retries, index: 0, kind: .download, reporter: events, redactor: Redactor(secrets: []),
                 baseDelay: 0.001)
    }

    static let url = "http://127.0.0.1/f.bin"
    static let dropped = TransferError.connection(url: url, code: 7, message: "connection refused")
    /// 503 with `Retry-After: 0`, so the test does not wait.
    static let busy = TransferError.status(url: url, code: 503, retryAfter: RetryAfter(parsing: "0"), body: "")

    /// Every kind of attempt gives the same hint for 401 and 403: the piece of a segmented
    /// download used to lose it.
    @Test(arguments: [401, 403])
    func credentialsHintOnUnauthorized(code: Int) async {
        let failure = TransferError.status(url: Self.url, code: code, retryAfter: nil, body: "")
        do {
            _ = try await loop(retries: 5).run { () -> Attempt<Void> in .failed(failure, position: 0) }
            Issue.record("a \(code) must fail the entry")
        } catch let error as SyncError {
            #expect(error == .http(status: code, url: Self.url, body: "", retries: .init(stop: .notRetryable)))
            #expect(error.description.contains("check the credentials"), "\(error)")
            #expect(!error.description.contains("gave up"), "a 4xx is not retried: \(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A server that is busy twice, then answers: two retries reported, then the value.
    @Test func retriesUntilTheServerAnswers() async throws {
        let events = Events()
        var calls = 0
        let value = try await loop(retries: 3, events).run { () -> Attempt<Int> in
            calls += 1
            return calls < 3 ? .failed(Self.busy, position: 0) : .done(42)
        }
        #expect(value == 42)
        #expect(calls == 3)
        #expect(events.retries.map(\.attempt) == [1, 2])
    }

    /// A connection that keeps dropping but moves the file forward every time never uses up
    /// the budget; one that stops moving gives up after `retries` more attempts.
    @Test func onlyAttemptsWithoutProgressUseUpTheBudget() async {
        var calls = 0
        do {
            _ = try await loop(retries: 2).run(from: 0) { () -> Attempt<Void> in
                calls += 1
                // Ten attempts that each get 100 bytes further, then none that do.
                return .failed(Self.busy, position: Int64(min(calls, 10) * 100))
            }
            Issue.record("a server that stops moving must fail the entry")
        } catch let error as SyncError {
            #expect(calls == 13, "10 attempts with progress, then one without and its 2 retries")
            #expect(error.retries == .init(stop: .exhausted(retries: 2), kept: 1000))
            #expect(error.description.contains("gave up after 2 retries"), "\(error)")
            #expect(error.description.contains("kept in the cache, run again to resume"), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A server that ignores Range makes the stream start over at once: `.again` uses no
    /// retry and reports nothing.
    @Test func startingOverUsesNoRetry() async throws {
        let events = Events()
        var calls = 0
        try await loop(retries: 0, events).run { () -> Attempt<Void> in
            calls += 1
            return calls < 4 ? .again : .done(())
        }
        #expect(calls == 4)
        #expect(events.retries.isEmpty)
    }

    /// A POST whose request may have reached the server is not sent again, even on an error the
    /// policy would retry: the attempt's own judgement wins.
    @Test func theAttemptsJudgementOverridesThePolicy() async {
        var calls = 0
        do {
            _ = try await loop(retries: 5).run { () -> Attempt<Void> in
                calls += 1
                return .failed(Self.dropped, position: 0, retryable: false)
            }
            Issue.record("a refused retry must fail the entry")
        } catch let error as SyncError {
            #expect(calls == 1)
            #expect(error.retries?.stop == .notRetryable)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A cancelled attempt, or a cancelled run, ends the loop as an interruption, not a failure.
    @Test func cancellationIsAnInterruption() async {
        await #expect(throws: Interrupted.self) {
            try await loop(retries: 5).run { () -> Attempt<Void> in .failed(.cancelled, position: 0) }
        }
        let task = Task {
            try await loop(retries: 5).run { () -> Attempt<Void> in
                withUnsafeCurrentTask { $0?.cancel() }
                return .failed(Self.busy, position: 0)
            }
        }
        await #expect(throws: Interrupted.self) { try await task.value }
    }
}
