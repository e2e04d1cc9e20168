#if canImport(Glibc)
import Glibc
#endif

/// A request to stop, made on one thread and read on another: how a task's cancellation
/// reaches the work it handed to a thread outside Swift concurrency (a hash, a zip), where
/// `Task.isCancelled` is always false.
public final class StopRequest: Sendable {
    private let requested = Locked(false)

    /// A request not yet made.
    public init() {}

    /// Asks the work to stop. Safe from any thread, also from a cancellation handler.
    public func set() {
        requested.withLock { $0 = true }
    }

    /// Whether `set()` was called.
    public var isSet: Bool {
        requested.withLock { $0 }
    }
}

/// Whether the work running on this thread should stop, for long loops that check once per
/// block of data: in a task, whether the task was cancelled; on a thread doing blocking work
/// for a task (`serving(_:_:)`), whether that task was.
public enum Cancellation {
    /// True when the current task was cancelled, or the request this thread serves was set.
    public static var isRequested: Bool {
        if Task.isCancelled { return true }
        guard let raw = pthread_getspecific(key) else { return false }
        return Unmanaged<StopRequest>.fromOpaque(raw).takeUnretainedValue().isSet
    }

    /// Runs `body` on this thread with `request` as the one `isRequested` reads; the thread's
    /// earlier one (if any) is back when it returns.
    public static func serving<T, E: Error>(_ request: StopRequest, _ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(request).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return try withExtendedLifetime(request) { () throws(E) -> T in try body() }
    }

    /// The thread-specific slot: one per process, never deleted.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
