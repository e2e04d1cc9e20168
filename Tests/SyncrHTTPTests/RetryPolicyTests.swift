import Testing
@testable import SyncrHTTP

@Suite("RetryPolicy", .timeLimit(.minutes(10)))
struct RetryPolicyTests {
    static let url = "https://example.com/f"

    static func status(_ code: Int, retryAfter: RetryAfter? = nil) -> TransferError {
        .status(url: url, code: code, retryAfter: retryAfter, body: "")
    }

    @Test("network trouble and server-side statuses are retried", arguments: [
        TransferError.connection(url: url, code: 7, message: "Connection refused"),
        TransferError.connection(url: url, code: 56, message: "Recv failure: Connection reset by peer"),
        TransferError.timedOut(url: url, message: "no progress for 30 s"),
        status(408), status(429), status(429, retryAfter: .seconds(5)),
        status(500), status(502), status(503), status(504), status(509), status(522), status(599),
    ])
    func retryable(_ error: TransferError) {
        #expect(RetryPolicy(maxRetries: 3).isRetryable(error))
    }

    @Test("errors that another attempt cannot fix are not retried", arguments: [
        status(400), status(401), status(403), status(404), status(405), status(410),
        status(412), status(416), status(418), status(499), status(300), status(304), status(600),
        status(501), status(505), status(506), status(507), status(508), status(510), status(511),
        TransferError.tls(url: url, message: "certificate has expired"),
        TransferError.local(path: "/tmp/x", errno: 28, message: "No space left on device"),
        TransferError.invalidResponse(url: url, message: "bad Content-Range"),
        TransferError.rangeNotHonoured(url: url),
        TransferError.redirect(url: url, message: "too many redirects"),
        TransferError.cancelled,
    ])
    func notRetryable(_ error: TransferError) {
        #expect(!RetryPolicy(maxRetries: 3).isRetryable(error))
    }

    @Test("defaults")
    func defaults() {
        let p = RetryPolicy(maxRetries: 4)
        #expect(p.maxRetries == 4)
        #expect(p.baseDelay == 0.5)
        #expect(p.maxDelay == 30)
        #expect(p.maxRetryAfter == 300)
    }

    // MARK: backoff without Retry-After

    @Test("full jitter draws from [0, min(maxDelay, base * 2^attempt)]", arguments: [
        (0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0),
        (6, 30.0),      // 32 capped at maxDelay
        (10, 30.0),
        (30, 30.0),
        (63, 30.0),     // the shift is bounded: no overflow trap for large attempts
        (1_000, 30.0),
    ])
    func ceilingPerAttempt(_ attempt: Int, _ ceiling: Double) {
        let p = RetryPolicy(maxRetries: 10, baseDelay: 0.5, maxDelay: 30)
        var asked: [Double] = []
        let top = p.delay(attempt: attempt, retryAfter: nil, now: 0) { asked.append($0); return $0 }
        let bottom = p.delay(attempt: attempt, retryAfter: nil, now: 0) { asked.append($0); return 0 }
        #expect(asked == [ceiling, ceiling])
        #expect(top == ceiling)
        #expect(bottom == 0)
    }

    @Test("the jittered value is returned as drawn")
    func returnsDrawnValue() {
        let p = RetryPolicy(maxRetries: 10, baseDelay: 1, maxDelay: 60)
        #expect(p.delay(attempt: 3, retryAfter: nil, now: 0) { $0 / 2 } == 4)
        #expect(p.delay(attempt: 3, retryAfter: nil, now: 0) { _ in 1.25 } == 1.25)
    }

    @Test("a smaller maxDelay caps even the first step")
    func capBelowBase() {
        let p = RetryPolicy(maxRetries: 3, baseDelay: 10, maxDelay: 2)
        #expect(p.delay(attempt: 0, retryAfter: nil, now: 0) { $0 } == 2)
    }

    @Test("the default random source stays within the full-jitter bounds")
    func defaultRandomInBounds() throws {
        let p = RetryPolicy(maxRetries: 10, baseDelay: 0.5, maxDelay: 30)
        for attempt in 0..<12 {
            let ceiling = min(30, 0.5 * Double(1 << attempt))
            for _ in 0..<50 {
                let d = try #require(p.delay(attempt: attempt, retryAfter: nil, now: 0))
                #expect(d >= 0 && d <= ceiling)
            }
        }
    }

    // MARK: Retry-After

    @Test("Retry-After seconds is honoured as at least the asked wait, plus at most one second",
          arguments: [0, 1, 4, 20])
    func retryAfterSeconds(_ attempt: Int) throws {
        let p = RetryPolicy(maxRetries: 10, baseDelay: 0.5, maxDelay: 30, maxRetryAfter: 300)
        var jitterCeilings: [Double] = []
        let low = try #require(p.delay(attempt: attempt, retryAfter: .seconds(10), now: 1_000) {
            jitterCeilings.append($0); return 0
        })
        let high = try #require(p.delay(attempt: attempt, retryAfter: .seconds(10), now: 1_000) {
            jitterCeilings.append($0); return $0
        })
        #expect(low == 10)
        #expect(high >= 10 && high <= 11)
        #expect(jitterCeilings.allSatisfy { $0 <= 1.0 && $0 >= 0 })
    }

    @Test("Retry-After wins over a longer backoff step (the server's word, not the cap)")
    func retryAfterLongerThanMaxDelay() throws {
        let p = RetryPolicy(maxRetries: 10, baseDelay: 0.5, maxDelay: 30, maxRetryAfter: 300)
        let d = try #require(p.delay(attempt: 0, retryAfter: .seconds(120), now: 0) { _ in 0 })
        #expect(d == 120)
    }

    @Test("Retry-After as a date waits until that date")
    func retryAfterDate() throws {
        let p = RetryPolicy(maxRetries: 10, maxRetryAfter: 300)
        let now: Int64 = 784_111_777
        let d = try #require(p.delay(attempt: 2, retryAfter: .date(now + 45), now: now) { _ in 0 })
        #expect(d == 45)
        let e = try #require(p.delay(attempt: 2, retryAfter: .date(now + 45), now: now) { $0 })
        #expect(e >= 45 && e <= 46)
    }

    @Test("a Retry-After date in the past means no forced wait")
    func retryAfterPastDate() throws {
        let p = RetryPolicy(maxRetries: 10)
        let d = try #require(p.delay(attempt: 0, retryAfter: .date(0), now: 784_111_777) { _ in 0 })
        #expect(d == 0)
    }

    @Test("a Retry-After exactly at maxRetryAfter is honoured")
    func retryAfterAtLimit() throws {
        let p = RetryPolicy(maxRetries: 3, maxRetryAfter: 300)
        let d = try #require(p.delay(attempt: 0, retryAfter: .seconds(300), now: 0) { _ in 0 })
        #expect(d == 300)
    }

    @Test("a Retry-After beyond maxRetryAfter gives nil (fail instead of stalling)", arguments: [
        RetryAfter.seconds(301),
        RetryAfter.seconds(86_400),
        RetryAfter.seconds(Int64.max),
        RetryAfter.date(784_111_777 + 301),
        RetryAfter.date(253_402_300_799),
    ])
    func retryAfterBeyondLimit(_ r: RetryAfter) {
        let p = RetryPolicy(maxRetries: 3, maxRetryAfter: 300)
        var called = false
        let d = p.delay(attempt: 0, retryAfter: r, now: 784_111_777) { called = true; return $0 }
        #expect(d == nil)
        #expect(!called)
    }
}
