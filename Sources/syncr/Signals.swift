#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import SyncrCore
import SyncrLock

/// SIGINT and SIGTERM: the first asks the run to stop and save its progress; a second one
/// exits at once.
///
/// The handler itself does only async-signal-safe things: an atomic exchange and a `write` to
/// a pipe on the first signal, `_exit` on the second. A thread of ours reads the pipe and does
/// the rest (the notice, the hooks, cancelling the run) in ordinary code. A second signal's
/// immediate exit is safe for the cache: every record is replaced atomically (written to a
/// temporary file, flushed, renamed) and only after the bytes it vouches for were flushed, so
/// whatever instant the process dies at, the records on disk are the old ones or the new ones.
enum Signals {
    /// Adds a hook called on the signal thread after the first signal, before the notice is
    /// printed and the run cancelled, with the signal number: for whoever draws on the
    /// terminal (e.g. to clear a progress bar first). May be called at any time, also after
    /// `install`; ordinary Swift code is fine here.
    static func onFirstSignal(_ hook: @escaping @Sendable (Int32) -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    /// Called inside the signal handler right before a second signal's `_exit`: it must be
    /// async-signal-safe (`write(2)` of constant bytes; no locks, no allocation, no Swift
    /// strings), e.g. showing the cursor a progress bar hid. May be set at any time.
    static var emergency: (@convention(c) () -> Void)? {
        get {
            let raw = state.emergency.load(ordering: .acquiring)
            return raw == 0 ? nil : unsafeBitCast(raw, to: (@convention(c) () -> Void).self)
        }
        set {
            state.emergency.store(newValue.map { unsafeBitCast($0, to: UInt.self) } ?? 0, ordering: .releasing)
        }
    }

    private static let hooks = Locked<[@Sendable (Int32) -> Void]>([])

    /// What `apply` prints on the first signal: a SIGTERM comes from a CI runner or `kill`,
    /// where no Ctrl-C is at hand.
    static func applyNotice(_ signal: Int32) -> String {
        "syncr: interrupted; stopping transfers and saving progress ("
            + (signal == SIGTERM ? "a second SIGTERM or SIGINT quits at once" : "press Ctrl-C again to quit at once")
            + "; nothing is lost either way)"
    }

    /// After `apply`'s summary: which entries were interrupted and how to go on.
    static func reportInterrupted(_ report: ApplyReport) {
        let interrupted = report.interrupted
        guard let signal = received ?? (interrupted.isEmpty ? nil : SIGINT) else { return }
        // Bounded: a manifest of thousands must not print thousands of lines here.
        let shown = 10
        for r in interrupted.prefix(shown) {
            Output.err("  interrupted: \(Rendering.name(r.item)): \(r.error?.description ?? "interrupted")")
        }
        if interrupted.count > shown { Output.err("  ... and \(interrupted.count - shown) more interrupted") }
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        // A signal during the last steps (a flush, an unpack), which finish: nothing is left.
        guard !interrupted.isEmpty else {
            return Output.err("syncr: interrupted by \(name), after every entry had finished: nothing is left to resume.")
        }
        // An upload to an HTTP server has nothing to resume from: said, not promised a resume.
        let sentAgain = interrupted.contains { $0.error == .interrupted(.upload(resumes: false)) }
        Output.err("syncr: interrupted by \(name); what arrived is kept in the cache: run the same command again to resume"
            + (sentAgain ? " (an upload to an HTTP server that was cut off is sent again whole)." : "."))
    }

    /// The signal that interrupted the run, or nil.
    static var received: Int32? {
        let signal = state.first.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    /// The exit status for a run interrupted by `signal`: 128 + its number, as shells report
    /// it (130 for SIGINT, 143 for SIGTERM).
    static func exitCode(for signal: Int32) -> Int32 { 128 + signal }

    /// Catches SIGINT and SIGTERM from now on. A signal the parent set to be ignored stays
    /// ignored (a shell runs background jobs with SIGINT ignored, so Ctrl-C does not reach them).
    /// - Parameters:
    ///   - notice: the line printed to stderr on the first signal, for that signal.
    ///   - interrupt: stops the run (cancels its task); called on the signal thread.
    static func install(notice: @escaping @Sendable (Int32) -> String, interrupt: @escaping @Sendable (Int32) -> Void) {
        // Touch the state now, so that the handler never runs a lazy initialiser.
        _ = state.pipeWrite.load(ordering: .relaxed)
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let readEnd = fds[0]
        state.pipeWrite.store(fds[1], ordering: .releasing)
        Thread.start(named: "syncr-signals") {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n == 1 { break }
                if n < 0 && errno == EINTR { continue }
                return
            }
            let signal = Int32(byte)
            for hook in hooks.withLock({ $0 }) { hook(signal) }
            Output.err(notice(signal))
            interrupt(signal)
        }
        for signal in [SIGINT, SIGTERM] {
            var old = sigaction()
            guard sigaction(signal, nil, &old) == 0 else { continue }
            if let handler = old.__sigaction_handler.sa_handler, unsafeBitCast(handler, to: Int.self) == 1 {
                continue  // SIG_IGN
            }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handleSignal
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        // A parent may have started us with these blocked (threads of Dispatch and Swift
        // concurrency block nearly every signal, and a child inherits the mask).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// What the handler touches: atomics only.
    fileprivate final class State: Sendable {
        /// The first signal's number; 0 until one arrives.
        let first = Atomic<Int32>(0)
        /// The pipe the handler wakes the signal thread through.
        let pipeWrite = Atomic<Int32>(-1)
        /// The `emergency` function's address; 0 when none.
        let emergency = Atomic<UInt>(0)
    }

    fileprivate static let state = State()
}

/// The signal handler: async-signal-safe only.
private func handleSignal(_ signal: Int32) {
    let saved = errno
    defer { errno = saved }
    let (exchanged, _) = Signals.state.first.compareExchange(expected: 0, desired: signal, ordering: .acquiringAndReleasing)
    if exchanged {
        var byte = UInt8(truncatingIfNeeded: signal)
        _ = write(Signals.state.pipeWrite.load(ordering: .acquiring), &byte, 1)
        return
    }
    let emergency = Signals.state.emergency.load(ordering: .acquiring)
    if emergency != 0 { unsafeBitCast(emergency, to: (@convention(c) () -> Void).self)() }
    _exit(Signals.exitCode(for: signal))
}
