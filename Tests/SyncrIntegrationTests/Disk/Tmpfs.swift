#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A small tmpfs the test mounts itself, to fill up or make read-only; unmounted (lazily, so a
/// busy mount never blocks) and removed when the object goes away, however the test ended.
///
/// Mounting needs root. CI runs the tests as root, so there a failure to mount fails the test;
/// a developer running them as another user sees them skipped with a message (`requiresRoot`).
final class Tmpfs: Sendable {
    let folder: TemporaryDirectory
    let path: String

    /// Mounts a tmpfs of `megabytes` MiB on a fresh folder; `inodes` caps the files and folders
    /// it holds (a disk that runs out of them answers ENOSPC, whatever room is left).
    init(megabytes: Int, inodes: Int? = nil) throws {
        folder = try TemporaryDirectory(prefix: "tmpfs")
        path = folder.path + "/mnt"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.mount(path, flags: 0, options: "size=\(megabytes)m,mode=0755" + (inodes.map { ",nr_inodes=\($0)" } ?? ""))
    }

    deinit {
        umount2(path, Int32(MNT_DETACH))
    }

    /// Changes the size, keeping the files.
    func resize(megabytes: Int) throws {
        try Self.mount(path, flags: UInt(MS_REMOUNT), options: "size=\(megabytes)m")
    }

    /// Makes the file system read-only, or writable again.
    func setReadOnly(_ readOnly: Bool) throws {
        try Self.mount(path, flags: UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0), options: nil)
    }

    /// A path inside the mount.
    func at(_ relative: String) -> String { path + "/" + relative }

    private static func mount(_ path: String, flags: UInt, options: String?) throws {
        let result = options.map { Glibc.mount("tmpfs", path, "tmpfs", flags, $0) } ?? Glibc.mount("tmpfs", path, "tmpfs", flags, nil)
        guard result == 0 else {
            throw MountError(path: path, message: String(cString: strerror(errno)))
        }
    }

    struct MountError: Error, CustomStringConvertible {
        var path: String
        var message: String
        var description: String {
            "cannot mount a tmpfs on \(path): \(message) (these tests need root, as on CI)"
        }
    }

    /// Whether the tests that mount can run: as root always; as another user they are skipped
    /// (visibly, by Swift Testing) unless `CI` is set, where they then fail loudly.
    static var canRun: Bool {
        getuid() == 0 || ProcessInfo.processInfo.environment["CI"] != nil
    }
}
