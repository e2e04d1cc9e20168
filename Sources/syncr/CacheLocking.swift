#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// `apply`'s hold on the cache folder, with what the operator is told about it.
///
/// `plan` takes no lock: it only reads records, which apply replaces atomically, so a plan
/// beside a running apply shows the cache as it is at that moment and harms nothing.
enum CacheLocking {
    enum Outcome {
        case locked(CacheLock)
        /// The exit status to end with (the reason was printed).
        case failed(Int32)
    }

    /// Locks `directory`, waiting up to the timeout for another run. Exits 75 (EX_TEMPFAIL)
    /// when the other run keeps it, naming its PID.
    ///
    /// - Parameter canWait: whether the command takes `--lock-timeout` (apply); the advice
    ///   names it only then.
    static func acquire(directory: String, timeoutMilliseconds: Int, quiet: Bool, canWait: Bool = false) async -> Outcome {
        if let clash = lockfileClash(directory: directory) {
            Output.err("syncr: error: \(clash)")
            return .failed(ExitCode.invalidManifest)
        }
        let timeout = Duration.milliseconds(timeoutMilliseconds)
        do {
            let lock = try await CacheLock.acquire(directory: directory, timeout: timeout) { pid in
                guard !quiet else { return }
                let who = "another syncr run" + (pid.map { " (PID \($0))" } ?? "")
                Output.err("syncr: waiting up to \(DurationText.format(milliseconds: timeoutMilliseconds)) "
                    + "for \(who) to finish with the cache \(directory)")
            }
            return .locked(lock)
        } catch let error as CacheLockError {
            switch error {
            case .busy:
                let advice = !canWait ? "run this command again once it has finished"
                    : timeoutMilliseconds == 0 ? "wait for it to finish, or pass --lock-timeout 5m to wait for it"
                    : "try again later, or pass a longer --lock-timeout"
                Output.err("syncr: error: \(error.description); \(advice)")
                return .failed(ExitCode.cacheBusy)
            case .cannotLock, .heldHere:
                Output.err("syncr: error: \(error.description)")
                return .failed(ExitCode.failures)
            }
        } catch {
            // Cancelled while waiting (SIGINT, SIGTERM): the caller exits 130 or 143.
            return .failed(ExitCode.failures)
        }
    }

    /// The cache's lock file and a manifest's lockfile share the name `syncr.lock`: with the
    /// cache in the manifest's own folder (`cache: .`), taking the cache lock would write a PID
    /// over the lockfile. Says so when the file there is a lockfile.
    static func lockfileClash(directory: String) -> String? {
        let path = directory + "/" + CacheLock.fileName
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var head = [UInt8](repeating: 0, count: 32)
        let n = fread(&head, 1, head.count, file)
        guard String(decoding: head[0..<n], as: UTF8.self).hasPrefix(Lockfile.header) else { return nil }
        return "\(path) is a lockfile written by 'syncr lock', where the cache \(directory) keeps its own lock file "
            + "of that name; give the cache a folder of its own ('cache:' in the manifest, or --cache DIR)"
    }
}
