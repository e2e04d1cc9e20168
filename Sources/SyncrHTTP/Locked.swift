#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a POSIX mutex: what `Synchronization.Mutex` gives, with a
/// `pthread_mutex_t` under it.
///
/// Not `Mutex`, because on Linux its lock is a futex driven from the uninstrumented standard
/// library: ThreadSanitizer sees no ordering between two `withLock` closures and reports the
/// state they guard as racing (two threads incrementing a `Mutex<Int>` are enough to show it).
/// Sanitizers intercept `pthread_mutex_lock`, so with this type the whole suite runs under
/// ThreadSanitizer without suppressions. Uncontended, either costs a few nanoseconds.
///
/// Every module of syncr that needs a lock uses this one.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only between lock and unlock.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
