#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a POSIX mutex: what `Synchronization.Mutex` gives, with a
/// `pthread_mutex_t` under it. The one lock type of syncr: every module that needs a lock uses
/// this one, which is why it sits in a module of its own that imports nothing of syncr's.
///
/// Not `Mutex`, because on Linux its lock is a futex driven from the uninstrumented standard
/// library: ThreadSanitizer sees no ordering between two `withLock` closures and reports the
/// state they guard as racing (two threads incrementing a `Mutex<Int>` are enough to show it).
/// Sanitizers intercept `pthread_mutex_lock`, so with this type the whole suite runs under
/// ThreadSanitizer without suppressions. Uncontended, either costs a few nanoseconds.
///
/// A lock made `waitable` also lets a thread wait until the value is in a given state
/// (`withLock(when:_:)`), for the threads that are not Swift's (the zip workers): it carries a
/// condition variable, which only such locks allocate.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only between lock and unlock; the pthread objects
    // live at fixed heap addresses (a Swift stored property may move) and are touched only
    // through the pthread calls, which are safe from any thread.
    // @usableFromInline, so that `withLock` is inlined and specialized in the modules that use
    // it: it runs for every 16 KiB a transfer receives.
    @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>?

    /// - Parameter waitable: whether threads will wait on the value with `withLock(when:_:)`.
    public init(_ value: Value, waitable: Bool = false) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        if waitable {
            let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
            c.initialize(to: pthread_cond_t())
            pthread_cond_init(c, nil)
            condition = c
        } else {
            condition = nil
        }
    }

    deinit {
        if let condition {
            pthread_cond_destroy(condition)
            condition.deinitialize(count: 1)
            condition.deallocate()
        }
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock. On a waitable lock, threads waiting in
    /// `withLock(when:_:)` then look at the value again.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if let condition { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Waits until `ready` holds for the value (the lock is released while waiting), then runs
    /// `body` with the lock held, as `withLock` does. The value is looked at again after every
    /// `withLock` on this lock. Only for a lock made `waitable`, and only on threads of one's
    /// own: it blocks the thread, which Swift's cooperative pool must never be.
    public func withLock<Result, E: Error>(when ready: (Value) -> Bool,
                                           _ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        guard let condition else { preconditionFailure("withLock(when:) on a Locked made without waitable: true") }
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !ready(value) { pthread_cond_wait(condition, mutex) }
        return try body(&value)
    }
}
