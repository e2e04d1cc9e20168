import Foundation

/// `error.localizedDescription` is the message the CLI prints: it was Foundation's "The
/// operation could not be completed. (SyncrCore.SyncError error 0.)", useless to a program
/// that shows errors through it.
extension SyncError: LocalizedError {
    /// The message, as `description` (with the manifest's secrets masked where the error came
    /// from a session).
    public var errorDescription: String? { description }
}

extension CacheLockError: LocalizedError {
    /// The message, as `description`.
    public var errorDescription: String? { description }
}
