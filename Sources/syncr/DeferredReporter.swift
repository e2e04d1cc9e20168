import SyncrCore
import SyncrLock

/// Stands in for the progress reporter until it exists: `apply` takes the cache lock and prints
/// its warnings before a bar may take over the terminal, but the session is made first.
final class DeferredReporter: RunReporter {
    private let target = Locked<(any RunReporter)?>(nil)

    /// From now on events go to `reporter`.
    func attach(_ reporter: any RunReporter) {
        target.withLock { $0 = reporter }
    }

    func report(_ event: ProgressEvent) {
        target.withLock { $0 }?.report(event)
    }

    func finish() {
        target.withLock { $0 }?.finish()
    }
}
