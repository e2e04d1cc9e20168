#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SyncrCore
import SyncrManifest
import Testing

/// Whose lock a lockfile is: its `manifest:` (a file name, the manifest's path from the lock)
/// against the manifest run, by name first and by the files only when the names differ.
@Suite(.timeLimit(.minutes(10))) struct LockOwnerTests {
    /// A folder holding `data.yml`, and `data.yaml` when `sibling`.
    static func folder(sibling: Bool) throws -> String {
        let path = NSTemporaryDirectory() + "lock-owner-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try "version: 1\n".write(toFile: path + "/data.yml", atomically: true, encoding: .utf8)
        if sibling { try "version: 1\n".write(toFile: path + "/data.yaml", atomically: true, encoding: .utf8) }
        return path
    }

    static func lock(for name: String) -> Lockfile { Lockfile(manifest: name, entries: []) }

    @Test(arguments: [("syncr.yml", "syncr.yml"), ("ci/data.yml", "data.yml"), ("/abs/ci/data.yaml", "data.yaml"), ("list", "list")])
    func aLockRecordsTheManifestsFileName(path: String, name: String) {
        #expect(Lockfile.manifestName(forManifest: path) == name)
    }

    /// Names are compared, not paths: the same lock of `data.yml` is the manifest's from any
    /// folder, even one that does not exist (nothing is looked at when the names agree).
    @Test(arguments: ["data.yml", "ci/data.yml", "/elsewhere/ci/data.yml", "./data.yml"])
    func theSameNameIsTheManifestWhereverItIs(manifestPath: String) {
        let lockPath = Lockfile.path(forManifest: manifestPath)
        #expect(LockCheck.owner(of: Self.lock(for: "data.yml"), lockPath: lockPath, manifestPath: manifestPath) == .this)
        #expect(LockCheck.ownerProblem(Self.lock(for: "data.yml"), lockPath: lockPath, manifestPath: manifestPath) == nil)
        #expect(LockCheck.owner(of: Self.lock(for: ""), lockPath: lockPath, manifestPath: manifestPath) == .this,
                "a lock that names no manifest")
    }

    @Test func anotherManifestBesideTheLockIsNamed() throws {
        let dir = try Self.folder(sibling: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/data.yaml", lockPath = dir + "/data.lock"
        #expect(LockCheck.owner(of: Self.lock(for: "data.yml"), lockPath: lockPath, manifestPath: manifest) == .sibling(dir + "/data.yml"))
        #expect(LockCheck.ownerProblem(Self.lock(for: "data.yml"), lockPath: lockPath, manifestPath: manifest)
                == "\(lockPath) is the lockfile of \(dir)/data.yml, not of \(manifest) (both manifests' lockfiles are named "
                + "\(lockPath)); rename one of the two manifests so that each has a lockfile of its own, then run 'syncr lock' "
                + "for the renamed one")
    }

    @Test func aManifestThatIsGoneIsTold() throws {
        let dir = try Self.folder(sibling: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/data.yml", lockPath = dir + "/data.lock"
        #expect(LockCheck.owner(of: Self.lock(for: "old.yml"), lockPath: lockPath, manifestPath: manifest) == .gone(dir + "/old.yml"))
        #expect(LockCheck.ownerProblem(Self.lock(for: "old.yml"), lockPath: lockPath, manifestPath: manifest)
                == "\(lockPath) was written for \(dir)/old.yml, not for \(manifest), and there is no such file; if it was "
                + "renamed data.yml, run 'syncr lock \(manifest)' to lock it under its new name (or set 'manifest: \"data.yml\"' "
                + "in \(lockPath) to keep what it locks)")
    }

    /// A link to the manifest, or a hard link, is the manifest: the same file by another name.
    @Test func aLinkToTheManifestIsTheManifest() throws {
        let dir = try Self.folder(sibling: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(symlink("data.yml", dir + "/syncr.yml") == 0)
        #expect(link(dir + "/data.yml", dir + "/hard.yml") == 0)
        let lock = Self.lock(for: "data.yml")
        #expect(LockCheck.owner(of: lock, lockPath: dir + "/syncr.lock", manifestPath: dir + "/syncr.yml") == .this)
        #expect(LockCheck.owner(of: lock, lockPath: dir + "/hard.lock", manifestPath: dir + "/hard.yml") == .this)
        #expect(LockCheck.owner(of: Self.lock(for: "syncr.yml"), lockPath: dir + "/data.lock", manifestPath: dir + "/data.yml") == .this)
    }
}
