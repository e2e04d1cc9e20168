import CCurl
import Synchronization
import SyncrLock

/// The curl easy handles of one engine's finished transfers, kept for the next ones.
///
/// With a handle made and freed for every request, a scheduler trace of a no-op run showed
/// pool threads waiting for a heap lock in `free()` under `curl_easy_cleanup` (most likely the
/// engine thread's heap, where curl allocates during the transfer); with handles reused the
/// run took up to 7% less CPU over 2000 entries. A handle given back is reset at once
/// (`curl_easy_reset`: every option back to its default, so no header, credential, range or
/// TLS setting of the last request carries over; curl keeps only its TLS session and DNS
/// caches, which it matches against the new request's settings itself).
final class EasyHandlePool: Sendable {
    /// Idle handles, the most recently used last.
    private let idle = Locked<[UnsafeMutableRawPointer]>([])
    /// At most this many idle handles are kept; more are freed.
    let capacity: Int
    /// Handles handed out again: a test sees reuse with it.
    let reuses = Atomic<Int>(0)
    /// Handles waiting to be reused.
    var idleCount: Int { idle.withLock { $0.count } }

    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        idle.withLock { handles in handles.forEach { curl_easy_cleanup($0) } }
    }

    /// A handle with every option at its default, or nil when curl cannot make one.
    func take() -> UnsafeMutableRawPointer? {
        if let handle = idle.withLock({ $0.popLast() }) {
            reuses.add(1, ordering: .relaxed)
            return handle
        }
        return curl_easy_init()
    }

    /// Takes back a handle no multi handle holds any more. It is reset here, before its
    /// transfer frees what the options point at (the header list, the error buffer, the
    /// transfer itself), so that an idle handle points at nothing freed.
    func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = idle.withLock { handles -> Bool in
            guard handles.count < capacity else { return false }
            handles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }
}
