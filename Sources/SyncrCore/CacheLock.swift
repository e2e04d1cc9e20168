#if canImport(Glibc)
import Glibc
#endif
import SyncrLock
import SyncrManifest

/// Why the cache folder could not be locked.
public enum CacheLockError: Error, Sendable, CustomStringConvertible {
    /// Another process holds the lock; `pid` is the one it recorded (nil if it has not written
    /// it yet, or the file cannot be read); `waited` is how long this run waited for it.
    case busy(directory: String, pid: Int32?, waited: Duration)
    /// The lock file cannot be created, opened or locked.
    case cannotLock(path: String, operation: String, errno: Int32)
    /// This process holds the lock (a library's `CacheLock` not yet released, in another task
    /// or forgotten); `waited` as for `busy`.
    case heldHere(directory: String, waited: Duration)

    /// One line naming the cache folder or lock file, saying who holds it or why it cannot be
    /// locked, and what to do.
    public var description: String {
        switch self {
        case .busy(let directory, let pid, let waited):
            let who = "another syncr run" + (pid.map { " (PID \($0))" } ?? "")
            return waited == .zero
                ? "\(who) is using the cache \(directory)"
                : "\(who) still held the cache \(directory) after waiting \(Self.format(waited))"
        case .cannotLock(let path, let operation, let code):
            var text = "\(path): cannot \(operation): \(String(cString: strerror(code)))"
            if code == ENOLCK || code == EOPNOTSUPP || code == EINVAL {
                text += " (the cache's file system does not support locks; choose a local cache folder with --cache)"
            } else if code == ENOTDIR || code == EEXIST {
                text += " (a file stands where the cache folder, or a folder above it, goes: name a folder with cache: in "
                    + "the manifest or --cache, or move the file away)"
            }
            return text
        case .heldHere(let directory, let waited):
            return (waited == .zero ? "this process already holds the cache \(directory)"
                : "this process still held the cache \(directory) after waiting \(Self.format(waited))")
                + " (a CacheLock not released yet)"
        }
    }

    private static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return DurationText.format(milliseconds: Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}

/// One run at a time per cache folder: an exclusive `flock` on `<cache>/syncr.lock`.
///
/// The holder writes its PID into the file after locking, so a second run can name it. The
/// kernel drops a `flock` when its holder exits, however it exits, so a lock file left behind
/// by a crash never blocks anyone: only a live process can hold the lock. The file itself is
/// never removed, because removing it would let two runs lock two different inodes.
public final class CacheLock: Sendable {
    /// The lock file's name inside the cache folder.
    public static let fileName = "syncr.lock"

    /// The lock file.
    public let path: String
    /// The descriptor holding the lock; -1 once released.
    private let descriptor: Locked<Int32>
    /// The lock file's device and inode, as `held` lists it.
    private let file: FileIdentity?
    /// The lock files this process holds (one `CacheLock` each: a second `flock` of the file
    /// fails in this process too): `isHeld` answers from it.
    private static let held = Locked<Set<FileIdentity>>([])

    private init(path: String, fd: Int32) {
        self.path = path
        descriptor = Locked(fd)
        file = FileIdentity(descriptor: fd)
        if let file { Self.held.withLock { _ = $0.insert(file) } }
    }

    deinit {
        release()
    }

    /// The lock file of a cache folder.
    public static func path(directory: String) -> String { directory + "/" + fileName }

    /// Locks the cache folder (creating it if needed), waiting up to `timeout` for another run
    /// to finish with it: polls with backoff, so a waiting run costs nothing noticeable.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait; zero (or less) fails at once when the folder is in use.
    ///   - onWait: called once, with the holder's PID, when this run starts waiting.
    /// - Throws: `CacheLockError.busy` when the wait ran out (`.heldHere` when this process
    ///   holds the lock), `.cannotLock` when the file cannot be locked at all,
    ///   `CancellationError` when the task was cancelled while waiting.
    public static func acquire(directory: String, timeout: Duration = .zero,
                               onWait: (@Sendable (_ pid: Int32?) -> Void)? = nil) async throws -> CacheLock {
        let clock = ContinuousClock()
        let start = clock.now
        let timeout = max(timeout, .zero)
        var delay = Duration.milliseconds(20)
        var announced = false
        while true {
            if let lock = try attempt(directory: directory) { return lock }
            let waited = clock.now - start
            if waited >= timeout {
                // Known by the lock file this process holds, not by the PID in it: two
                // containers sharing a cache volume both run syncr as PID 1.
                if isHeld(directory: directory) { throw CacheLockError.heldHere(directory: directory, waited: timeout) }
                throw CacheLockError.busy(directory: directory, pid: holder(directory: directory), waited: timeout)
            }
            if !announced {
                announced = true
                onWait?(holder(directory: directory))
            }
            try await Task.sleep(for: min(delay, timeout - waited))
            delay = min(delay * 2, .milliseconds(500))
        }
    }

    /// One try: the lock, or nil when another process holds it.
    public static func attempt(directory: String) throws(CacheLockError) -> CacheLock? {
        do {
            try FS.makeDirectories(directory)
        } catch {
            throw .cannotLock(path: directory, operation: "create the cache folder", errno: error.errno)
        }
        let path = path(directory: directory)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotLock(path: path, operation: "open the lock file", errno: errno) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw .cannotLock(path: path, operation: "lock", errno: code)
        }
        // The PID only names the holder in the other run's message; a failure to write it
        // costs that name, nothing else.
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 {
            _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        return CacheLock(path: path, fd: fd)
    }

    /// The PID recorded in the cache's lock file, if any.
    public static func holder(directory: String) -> Int32? {
        guard let bytes = FS.readAll(path(directory: directory), limit: 64) else { return nil }
        let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let pid = Int32(String(decoding: digits, as: UTF8.self)), pid > 0 else { return nil }
        return pid
    }

    /// Gives the lock up (also done by `deinit`, and by the kernel when the process exits).
    public func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            // Unlisted before the unlock: listed after it, a lock taken meanwhile (by another
            // task of this process) would be unlisted by this release.
            if let file = self.file { Self.held.withLock { _ = $0.remove(file) } }
            // Emptied while still held, so it never names a run that has finished.
            _ = ftruncate(fd, 0)
            // Unlocked before the close: a child spawned by this process meanwhile holds a copy
            // of the descriptor until it execs (O_CLOEXEC acts only then), and a `flock` lasts
            // while any copy of its open file is open, so a close alone can leave the cache
            // locked for that moment (seen as a second attempt finding it busy).
            _ = flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    /// Whether this process holds the cache folder's lock (through any `CacheLock` not yet
    /// released). A library caller may run `Session.apply` without it, against the documented
    /// rule; apply then removes only what is certainly a dead run's (`Cache.removeLeftoverArchives`).
    /// Compared by the lock file's device and inode, so any spelling of the folder's path
    /// (relative, through a link) gives the same answer.
    public static func isHeld(directory: String) -> Bool {
        guard let file = FileIdentity(path: path(directory: directory)) else { return false }
        return Self.held.withLock { $0.contains(file) }
    }
}
