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
}

/// The one retry loop of syncr. Every kind of attempt (probe, single stream, piece of a
/// segmented download, PUT, POST) runs through it, so every kind waits, reports and gives up
/// the same way, and its final failure is explained by the same `FailureText`.
struct Retrying: Sendable {
    /// Retries after attempts that made no progress (`retries:`).
    let retries: Int
    /// The entry, for `.retrying` events.
    let index: Int
    /// "download" or "upload", for `.retrying` events.
    let kind: String
    let reporter: (any ProgressReporter)?
    let redactor: Redactor
    /// The first backoff step in seconds (the policy's; tests make it tiny).
    var baseDelay = 0.5
    /// For an `s3://` entry: its object and store, so that S3's error codes are explained.
    var s3: S3Object?

    /// Runs `attempt` until it is done, retrying what the policy allows with full-jitter
    /// backoff (or the server's `Retry-After`).
    ///
    /// - Parameter position: how far the transfer has got before the first attempt.
    /// - Parameter kept: the bytes a failure leaves for the next run, for the message.
    /// - Throws: `Interrupted` when the run is cancelled (or an attempt was), otherwise
    ///   `EntryFailure` with the operator's message.
    func run<Value: Sendable>(from position: Int64 = 0, kept: @Sendable (Int64) -> Int64 = { $0 },
                              _ attempt: () async throws -> Attempt<Value>) async throws -> Value {
        var budget = RetryBudget(retries: retries, position: position, baseDelay: baseDelay)
        while true {
            if Task.isCancelled { throw Interrupted() }
            let failure: TransferError, reached: Int64, retryable: Bool?
            switch try await attempt() {
            case .done(let value): return value
            case .again: continue
            case .failed(let e, let p, let r): (failure, reached, retryable) = (e, p, r)
            }
            if case .cancelled = failure { throw Interrupted() }
            let delay: Double
            do {
                delay = try budget.delay(after: failure, position: reached, retryable: retryable)
            } catch {
                throw EntryFailure(message: FailureText.describe(failure, kept: kept(reached), s3: s3) + error.suffix,
                                   cause: failure)
            }
            reporter?.report(.retrying(index: index, attempt: budget.failuresWithoutProgress, delay: delay,
                                       error: redactor.scrub(failure.description), kind: kind))
            do {
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            } catch {
                throw Interrupted()
            }
        }
    }
}

/// Why an entry failed, as shown to the operator (already complete: no more is added to it).
struct EntryFailure: Error {
    var message: String
    /// The cache's file system had no room for the preallocation.
    var noRoom = false
    /// The transfer error it came from, if it came from one.
    var cause: TransferError?
}

/// The one place a transfer failure becomes the operator's message, so that every kind of
/// request gives the same hints.
enum FailureText {
    /// `error`'s description, with what to do about it: check the credentials after 401 or 403,
    /// run again to resume when `kept` bytes wait in the cache.
    static func describe(_ error: TransferError, kept: Int64 = 0, s3: S3Object? = nil) -> String {
        if let s3, let text = S3FailureText.describe(error, object: s3) { return text }
        switch error {
        case .status(_, let code, _, _) where (400..<500).contains(code) && code != 408 && code != 429:
            return error.description + (code == 401 || code == 403 ? " (check the credentials in headers:)" : "")
        default:
            let resume = kept > 0 ? "; \(ByteSize.format(kept)) kept in the cache, run again to resume" : ""
            return error.description + resume
        }
    }
}
