import Foundation

extension Thread {
    /// Starts a thread of syncr's own under `name`, as `top -H`, `perf` and `/proc` show it.
    ///
    /// The name is set from inside the thread: Foundation on Linux gives the system thread the
    /// name only when it is set on the running thread, and otherwise the thread keeps the name
    /// of the one that made it (often a Dispatch worker's).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.current.name = name
            body()
        }
        thread.name = name
        thread.start()
    }
}
