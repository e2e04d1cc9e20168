#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SyncrCore
import SyncrManifest

/// Writes to stderr, whole lines only, so that logs read well on a terminal and in CI alike.
final class LineReporter: ProgressReporter {
    private let quiet: Bool
    private let total: Int
    private let started = Mutex(0)

    init(quiet: Bool, total: Int) {
        self.quiet = quiet
        self.total = total
    }

    func report(_ event: ProgressEvent) {
        switch event {
        case .started(let item):
            guard !quiet else { return }
            let n = started.withLock { value -> Int in value += 1; return value }
            var what = "\(item.action.rawValue) \(Rendering.name(item))"
            if let size = item.size {
                // A resume names what is cached: with pieces from several connections that is
                // more than the offset of the first missing byte.
                what += item.action == .resume
                    ? ": \(ByteSize.format(size - (item.bytes ?? 0))) of \(ByteSize.format(size)) cached"
                    : " (\(ByteSize.format(size)))"
            }
            Output.err("[\(n)/\(total)] \(what)" + (item.kind == "upload" ? "" : " from \(item.url)"))
        case .progress:
            break
        case .retrying(let index, let attempt, let delay, let error):
            guard !quiet else { return }
            Output.err("  retry #\(attempt) of entry \(index) in \(Rendering.seconds(delay)): \(error)")
        case .note(let index, let message):
            guard !quiet else { return }
            Output.err("  note: entry \(index): \(message)")
        case .finished(let result):
            switch result.status {
            case .ok:
                guard !quiet else { return }
                let note = result.item.action == .resume && result.transferred < (result.item.size ?? 0)
                    ? " (resumed at byte \(result.item.offset))" : ""
                Output.err("  done \(Rendering.name(result.item)): \(ByteSize.format(result.transferred)) in "
                    + "\(Rendering.seconds(result.seconds)), \(Rendering.speed(bytes: result.transferred, seconds: result.seconds))\(note)")
            case .skipped, .interrupted:
                // Interrupted entries are listed with the summary.
                break
            case .failed:
                Output.err("  FAILED \(Rendering.name(result.item)): \(result.error ?? "unknown error")")
            }
        }
    }
}

/// The only place that writes to the terminal.
enum Output {
    private static let lock = Mutex(())

    static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    static func err(_ line: String) { write(line + "\n", to: STDERR_FILENO) }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue }; return }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
