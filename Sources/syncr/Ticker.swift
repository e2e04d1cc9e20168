import Foundation
import Synchronization
import SyncrLock

/// Calls `action` every `interval` seconds on a thread of its own until `stop()`, so that
/// progress is shown even while every task of the cooperative pool is busy.
final class Ticker: Sendable {
    private let interval: Double
    private let action: @Sendable () -> Void
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    init(interval: Double, action: @escaping @Sendable () -> Void) {
        self.interval = interval
        self.action = action
        Thread.start(named: "syncr-progress") { [self] in loop() }
    }

    private func loop() {
        while !stopped.load(ordering: .acquiring) {
            _ = wake.wait(timeout: .now() + interval)
            if stopped.load(ordering: .acquiring) { break }
            action()
        }
        exited.signal()
    }

    /// Stops the thread and waits until it has left `action`; later calls do nothing.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        exited.wait()
    }
}
