#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP

/// The retry bookkeeping of one transfer: which failures are worth another attempt, how long to
/// wait, and when to give up.
///
/// Only attempts that made no progress use up the budget: a server that keeps dropping the
/// connection still gets the file finished, as long as every attempt moves it forward.
struct RetryBudget {
    let policy: RetryPolicy
    private(set) var failuresWithoutProgress = 0
    private var highWater: Int64

    /// - Parameter position: how far the transfer has got before its first attempt.
    /// - Parameter baseDelay: the first backoff step in seconds (tests make it tiny).
    init(retries: Int, position: Int64, baseDelay: Double = 0.5) {
        policy = RetryPolicy(maxRetries: retries, baseDelay: baseDelay)
        highWater = position
    }

    /// Why retrying stopped.
    enum Refusal: Error {
        case notRetryable
        case exhausted(retries: Int)
        case waitTooLong(seconds: Int)

        /// The same, as the entry's error tells it.
        var stop: SyncError.Retries.Stop {
            switch self {
            case .notRetryable: return .notRetryable
            case .exhausted(let retries): return .exhausted(retries: retries)
            case .waitTooLong(let seconds): return .waitTooLong(seconds: seconds)
            }
        }
    }

    /// Counts a failed attempt that left the transfer at `position`, and returns how many
    /// seconds to wait before the next one.
    ///
    /// - Parameter retryable: the request kind's own judgement, where it has one (a POST);
    ///   nil follows the policy.
    mutating func delay(after failure: TransferError, position: Int64, retryable: Bool? = nil) throws(Refusal) -> Double {
        guard retryable ?? policy.isRetryable(failure) else { throw .notRetryable }
        failuresWithoutProgress = position > highWater ? 0 : failuresWithoutProgress + 1
        highWater = max(highWater, position)
        if failuresWithoutProgress > policy.maxRetries { throw .exhausted(retries: policy.maxRetries) }
        var retryAfter: RetryAfter?
        if case .status(_, _, let asked, _, _, _) = failure { retryAfter = asked }
        guard let delay = policy.delay(attempt: max(0, failuresWithoutProgress - 1), retryAfter: retryAfter,
                                       now: Int64(time(nil))) else {
            throw .waitTooLong(seconds: Int(policy.maxRetryAfter))
        }
        return delay
    }
}
