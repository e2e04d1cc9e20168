import SyncrHTTP
import SyncrManifest
import SyncrS3

/// What one attempt at a request came to, as the retry loop needs it.
enum Attempt<Value: Sendable>: Sendable {
    /// Done: the loop returns this value.
    case done(Value)
    /// Failed with `error` after getting to `position` (bytes made good so far: an attempt
    /// that moved it forward does not use up the budget). `retryable` overrides the policy's
    /// judgement where the request kind has rules of its own (a POST).
    case failed(TransferError, position: Int64, retryable: Bool? = nil)
    /// Try again at once without using up the budget: the attempt showed that the next one
    /// must be different (a server that ignored Range is asked again from byte 0).
    case again
    /// Failed in a way the policy would retry, but a repeat could act twice (a POST that may
    /// have reached the server, without `retry: true`): the loop stops, saying why.
    case failedUnsafeToRepeat(TransferError)
}

/// The one retry loop of syncr. Every kind of attempt (probe, single stream, piece of a
/// segmented download, PUT, POST) runs through it, so every kind waits, reports and gives up
/// the same way, and its final failure is the same `SyncError`, worded in one place.
struct Retrying: Sendable {
    /// Retries after attempts that made no progress (`retries:`).
    let retries: Int
    /// The entry, for `.retrying` events.
    let index: Int
    /// Whether the entry is a download or an upload, for `.retrying` events.
    let kind: EntryKind
    /// The object of an `s3://` prefix entry this loop is for (`Download.object`), for its events.
    var object: Int?
    let reporter: (any ProgressReporter)?
    let redactor: Redactor
    /// The first backoff step in seconds (the policy's; tests make it tiny).
    var baseDelay = 0.5
    /// For an `s3://` entry: its object and store, so that S3's error codes are explained.
    var s3: S3Object?
    /// The run's servers that nobody answered for, and the URL (expanded, as sent) and URL as
    /// written of this entry: attempts at a server another entry gave up on fail at once.
    var unreachable: (hosts: UnreachableHosts, url: String, displayURL: String)?
    /// Where the entry's requests carry credentials: a 401 or 403 says what was sent (or why
    /// nothing was), read when the loop gives up.
    var credentials: CredentialSources?

    /// Runs `attempt` until it is done, retrying what the policy allows with full-jitter
    /// backoff (or the server's `Retry-After`).
    ///
    /// - Parameter position: how far the transfer has got before the first attempt.
    /// - Parameter kept: the bytes a failure leaves for the next run, for the message.
    /// - Throws: `Interrupted` when the run is cancelled (or an attempt was), otherwise the
    ///   last failure as a `SyncError`, with why the loop stopped and what the cache keeps.
    func run<Value: Sendable>(from position: Int64 = 0, kept: @Sendable (Int64) -> Int64 = { $0 },
                              _ attempt: () async throws -> Attempt<Value>) async throws -> Value {
        var budget = RetryBudget(retries: retries, position: position, baseDelay: baseDelay)
        var reached = position
        while true {
            if Task.isCancelled { throw Interrupted() }
            if let unreachable, let known = unreachable.hosts.failure(for: unreachable.url) {
                throw self.finalError(known.about(unreachable.displayURL),
                                      retries: .init(stop: .serverUnreachable, kept: kept(reached)))
            }
            let failure: TransferError, retryable: Bool?
            switch try await attempt() {
            case .done(let value):
                unreachable.map { $0.hosts.reached($0.url) }
                return value
            case .again: continue
            case .failed(let e, let p, let r): (failure, reached, retryable) = (e, p, r)
            case .failedUnsafeToRepeat(let e):
                if case .cancelled = e { throw Interrupted() }
                throw self.finalError(e, retries: .init(stop: .unsafeToRepeat, kept: kept(reached)))
            }
            if case .cancelled = failure { throw Interrupted() }
            if failure.isAnswer { unreachable.map { $0.hosts.reached($0.url) } }
            // Redirected to a server another entry gave up on: the entry made its own attempt
            // (the server may be back), and does not wait out its retries on it too.
            if let unreachable, failure.isUnreachable, let target = failure.redirectTarget,
               unreachable.hosts.failure(for: target) != nil {
                throw self.finalError(failure, retries: .init(stop: .serverUnreachable, kept: kept(reached)))
            }
            let delay: Double
            do {
                delay = try budget.delay(after: failure, position: reached, retryable: retryable)
            } catch {
                // After a redirect the server nobody answered for is the target: the entry's
                // own answered, and its other entries must still try it.
                unreachable.map { $0.hosts.gaveUp(on: failure.redirectTarget ?? $0.url, after: failure) }
                throw self.finalError(failure, retries: .init(stop: error.stop, kept: kept(reached)))
            }
            reporter?.report(.retrying(index: index, attempt: budget.failuresWithoutProgress, delay: delay,
                                       error: SyncError(failure, retries: .willRetry, s3: s3).scrubbed(redactor), kind: kind,
                                       object: object))
            do {
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            } catch {
                throw Interrupted()
            }
        }
    }

    /// The loop's last failure as the entry's error. A 401 or 403 from a server (not an object
    /// store, whose answers say more) carries where the credentials it refused came from.
    private func finalError(_ error: TransferError, retries: SyncError.Retries) -> SyncError {
        if case .unreadableNetrc(_, let file, _) = error {
            return SyncError.unreadableNetrc(error, file: file ?? NetrcSecrets.path, retries: retries)
        }
        let made = SyncError(error, retries: retries, s3: s3)
        guard let credentials, case .http(status: let status, url: let url, body: let body, retries: let r,
                                          proxy: let proxy, sent: nil) = made,
              status == 401 || status == 403
        else { return made }
        // Labelled, not by position: both cases gained values from one session to the next.
        let withheld = if case .status(_, _, _, _, _, credentialsWithheld: true) = error { true } else { false }
        return .http(status: status, url: url, body: body, retries: r, proxy: proxy, sent: credentials.sent(withheld: withheld))
    }
}
