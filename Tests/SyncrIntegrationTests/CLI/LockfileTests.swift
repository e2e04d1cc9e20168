import Foundation
import Testing

/// `syncr lock` and `--locked` against nginx: the lock is deterministic and holds no secret, a
/// locked run that has nothing to do sends no request, a server that changed fails its entry
/// and leaves the old destination, and the lock's SHA-256 is enforced.
@Suite("lockfile", .timeLimit(.minutes(5)))
struct LockfileTests {
    static let secret = "lock-Zp3Qw8Rt5Yx"

    struct Setup {
        var nginx: Nginx
        var www: TemporaryDirectory
        var project: Project
    }

    /// nginx serving a.bin and b.bin; the manifest names them with `${LOCK_BASE}` and a secret
    /// token from the environment.
    static func setUp() async throws -> Setup {
        let www = try TemporaryDirectory(prefix: "www-lock")
        _ = try makeFile(path: www.appending("a.bin"), size: 40_000, seed: 1)
        _ = try makeFile(path: www.appending("b.bin"), size: 3000, seed: 2)
        let nginx = try await Nginx.start(root: www.url)
        let project = try Project()
        try project.writeManifest(downloads: [
            "{ url: \"${LOCK_BASE}/a.bin?token=${LOCK_TOKEN}\", to: out/a.bin }",
            "{ url: \"\(nginx.url("/b.bin"))\", to: out/b.bin }",
        ])
        return Setup(nginx: nginx, www: www, project: project)
    }

    static func environment(_ s: Setup) -> [String: String] {
        ["LOCK_BASE": s.nginx.url(""), "LOCK_TOKEN": secret]
    }

    static func lockText(_ s: Setup) throws -> String {
        try String(contentsOf: s.project.file("syncr.lock"), encoding: .utf8)
    }

    @Test func lockIsDeterministicHoldsNoSecretAndHashPinsSHA256() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        let first = try await s.project.run(["lock"], environment: env)
        #expect(first.exitCode == 0, "\(first.stderr)")
        #expect(first.stderr.contains("wrote syncr.lock: 2 downloads, 2 without a SHA-256"), "\(first.stderr)")
        let text = try Self.lockText(s)
        #expect(!text.contains(Self.secret) && !first.stderr.contains(Self.secret))
        #expect(text.contains("url: \"${LOCK_BASE}/a.bin?token=${LOCK_TOKEN}\""), "the URL as written:\n\(text)")
        #expect(text.contains("size: 40000") && text.contains("size: 3000"))
        #expect(text.contains("etag: \"\\\""), "nginx's strong ETag:\n\(text)")
        #expect(!text.contains("sha256:"), "nothing was downloaded, nothing pinned")
        // Sorted by destination.
        let a = try #require(text.range(of: "to: \"out/a.bin\"")), b = try #require(text.range(of: "to: \"out/b.bin\""))
        #expect(a.lowerBound < b.lowerBound)

        let again = try await s.project.run(["lock"], environment: env)
        #expect(again.stderr.contains("syncr.lock is unchanged"), "\(again.stderr)")
        #expect(try Self.lockText(s) == text, "byte-identical against unchanged servers")

        let hashed = try await s.project.run(["lock", "--hash"], environment: env)
        #expect(hashed.exitCode == 0, "\(hashed.stderr)")
        let pinned = try Self.lockText(s)
        for name in ["a.bin", "b.bin"] {
            let sha = try await sha256(file: s.www.appending(name))
            #expect(pinned.contains("sha256: \"\(sha)\""), "\(name):\n\(pinned)")
            #expect(s.project.exists("out/" + name), "--hash downloaded through the cache")
        }
        #expect(!pinned.contains(Self.secret))
    }

    /// After `lock --hash`, `plan --locked` and `apply --locked` send no request at all: nginx's
    /// access log gains no line.
    @Test func lockedNoOpRunSendsNoRequest() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        let hashed = try await s.project.run(["lock", "--hash"], environment: env)
        try #require(hashed.exitCode == 0, "\(hashed.stderr)")
        let before = try await s.nginx.settledAccessLog()
        #expect(!before.isEmpty, "lock --hash asked the server")
        let plan = try await s.project.run(["plan", "--locked", "--detailed-exitcode"], environment: env)
        #expect(plan.exitCode == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("the server was not asked"), "\(plan.stdout)")
        let apply = try await s.project.run(["apply", "--locked", "--progress", "none"], environment: env)
        #expect(apply.exitCode == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("2 up to date"), "\(apply.stderr)")
        let after = try await s.nginx.settledAccessLog()
        #expect(after.count == before.count, "requests sent: \(after.dropFirst(before.count).map { "\($0.method) \($0.path)" })")
    }

    /// A file that changed on the server after `lock` fails its entry under `--locked` with
    /// exit 1, saying what changed; the old destination stays; the other entry is fetched.
    @Test func serverChangedAfterLockFailsAndKeepsTheOldDestination() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        // Plain apply first: the records vouch for no SHA-256, so --locked must ask the server.
        let apply = try await s.project.run(["apply", "--progress", "none"], environment: env)
        try #require(apply.exitCode == 0, "\(apply.stderr)")
        let lock = try await s.project.run(["lock"], environment: env)
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        let old = try Data(contentsOf: s.project.file("out/a.bin"))
        _ = try makeFile(path: s.www.appending("a.bin"), size: 41_000, seed: 9)
        try FileManager.default.removeItem(at: s.project.file("out/b.bin"))

        let plan = try await s.project.run(["plan", "--locked"], environment: env)
        #expect(plan.exitCode == 1)
        #expect(plan.stdout.contains("changed since syncr.lock was written (size 40000 → 41000 bytes)"), "\(plan.stdout)")
        let locked = try await s.project.run(["apply", "--locked", "--progress", "none"], environment: env)
        #expect(locked.exitCode == 1, "\(locked.stderr)")
        #expect(locked.stderr.contains("out/a.bin") && locked.stderr.contains("size 40000 → 41000"), "\(locked.stderr)")
        #expect(locked.stderr.contains("syncr lock"), "says how to accept it")
        #expect(try Data(contentsOf: s.project.file("out/a.bin")) == old, "the old destination stays")
        #expect(s.project.exists("out/b.bin"), "the unchanged entry was fetched")
        #expect(!(locked.stdout + locked.stderr).contains(Self.secret))
    }

    /// Same size and same ETag (nginx derives it from size and modification time, which is
    /// put back), other bytes: the lock's SHA-256 fails the download and nothing is placed.
    @Test func lockedSHA256IsEnforced() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        let hashed = try await s.project.run(["lock", "--hash"], environment: env)
        try #require(hashed.exitCode == 0, "\(hashed.stderr)")
        let path = s.www.appending("b.bin").path
        let mtime = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        _ = try makeFile(path: s.www.appending("b.bin"), size: 3000, seed: 77)
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
        let other = try Project()
        try FileManager.default.copyItem(at: s.project.file("syncr.yml"), to: other.file("syncr.yml"))
        try FileManager.default.copyItem(at: s.project.file("syncr.lock"), to: other.file("syncr.lock"))
        let r = try await other.run(["apply", "--locked", "--progress", "none"], environment: env)
        #expect(r.exitCode == 1, "\(r.stderr)")
        #expect(r.stderr.contains("out/b.bin") && r.stderr.lowercased().contains("sha256"), "\(r.stderr)")
        #expect(!other.exists("out/b.bin"), "nothing placed")
        #expect(other.exists("out/a.bin"))
    }

    /// A `${VAR}` in the URL that now expands to another file of the same size, on a server
    /// that sends no ETag: the lock knows the file only by its size and where the URL led, and
    /// the new place fails the entry rather than fetching another file.
    @Test func aURLLeadingElsewhereFailsALockWithoutETagOrSHA256() async throws {
        let root = try TemporaryDirectory(prefix: "www-lock-url")
        _ = try makeFile(path: root.appending("v1.bin"), size: 5000, seed: 81)
        _ = try makeFile(path: root.appending("v2.bin"), size: 5000, seed: 82)
        let server = try await FaultServer.start(root: root.url)
        defer { server.stop() }
        for path in ["/v1.bin", "/v2.bin"] { try await server.behave(path: path, FaultBehaviour(noValidators: true)) }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \"\(server.url("/"))${LOCK_CHANNEL}.bin\", to: out/f.bin }"])
        let lock = try await project.run(["lock"], environment: ["LOCK_CHANNEL": "v1"])
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        let r = try await project.run(["apply", "--locked", "--progress", "none"], environment: ["LOCK_CHANNEL": "v2"])
        #expect(r.exitCode == 1, "\(r.stderr)")
        #expect(r.stderr.contains("the URL now leads to \(server.url("/v2.bin")), locked \(server.url("/v1.bin"))"), "\(r.stderr)")
        #expect(!project.exists("out/f.bin"))
        let json = try await project.run(["apply", "--locked", "--json"], environment: ["LOCK_CHANNEL": "v2"])
        #expect(items(try jsonObject(json.stdout)).first?["error_code"] as? String == "locked_version_changed", "\(json.stdout)")
        let same = try await project.run(["apply", "--locked", "--progress", "none"], environment: ["LOCK_CHANNEL": "v1"])
        #expect(same.exitCode == 0, "\(same.stderr)")
    }

    /// An entry the lock does not know stops a locked run before any request, naming it.
    @Test func entryMissingFromTheLockIsAnError() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        _ = try await s.project.run(["lock"], environment: env)
        try s.project.writeManifest(downloads: [
            "{ url: \"${LOCK_BASE}/a.bin?token=${LOCK_TOKEN}\", to: out/a.bin }",
            "{ url: \"\(s.nginx.url("/b.bin"))\", to: out/b.bin }",
            "{ url: \"\(s.nginx.url("/b.bin"))\", to: out/new.bin }",
        ])
        let before = try await s.nginx.settledAccessLog()
        for command in ["plan", "apply"] {
            let r = try await s.project.run([command, "--locked"], environment: env)
            #expect(r.exitCode == 65, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("downloads[2] (to: out/new.bin) is not in syncr.lock; run 'syncr lock'"), "\(r.stderr)")
        }
        #expect(try await s.nginx.settledAccessLog().count == before.count)
        let none = try await Project().run(["plan", "--locked"])
        #expect(none.exitCode == 65)
    }

    /// A lock written when fewer query names were taken for credentials (a `?ticket=` in clear)
    /// still matches its manifest, and is never printed as it is: compared masked by today's
    /// rules, it broke every locked run after an upgrade and printed the ticket.
    @Test func aLockWrittenUnderOlderMaskingStillMatches() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        try s.project.writeManifest(downloads: ["{ url: \"\(s.nginx.url("/b.bin"))?ticket=ST-12345-abcdef\", to: out/b.bin }"])
        _ = try await s.project.run(["lock"], environment: env)
        let lock = s.project.file("syncr.lock")
        let text = try String(contentsOf: lock, encoding: .utf8)
        #expect(text.contains("ticket=***"), "\(text)")
        try text.replacingOccurrences(of: "ticket=***", with: "ticket=ST-12345-abcdef").write(to: lock, atomically: true, encoding: .utf8)
        let r = try await s.project.run(["plan", "--locked"], environment: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        try s.project.writeManifest(downloads: ["{ url: \"\(s.nginx.url("/a.bin"))?ticket=ST-12345-abcdef\", to: out/b.bin }"])
        let moved = try await s.project.run(["plan", "--locked"], environment: env)
        #expect(moved.exitCode == 65 && moved.stderr.contains("locks ") && !moved.stderr.contains("ST-12345"), "\(moved.stderr)")
    }

    /// nginx serving `t.tar.gz`, which holds `top/a.txt` ("hello").
    static func servedArchive() async throws -> (TemporaryDirectory, Nginx) {
        let www = try TemporaryDirectory(prefix: "www-lock-unzip")
        let tree = try TemporaryDirectory(prefix: "tree")
        try FileManager.default.createDirectory(at: tree.appending("top"), withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: tree.appending("top/a.txt"))
        let tar = try await runProcess(executable: "tar", arguments: ["-czf", www.appending("t.tar.gz").path, "-C", tree.path, "top"])
        try #require(tar.exitCode == 0, "\(tar.stderr)")
        return (www, try await Nginx.start(root: www.url))
    }

    /// An `unzip:` entry: the lock pins the archive (its SHA-256 from the archive kept in the
    /// cache), and a locked no-op run asks nothing even though the folder is not one file.
    @Test func unzipEntryPinsTheArchive() async throws {
        let (www, nginx) = try await Self.servedArchive()
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(downloads: ["{ url: \(nginx.url("/t.tar.gz")), to: out/t, unzip: true, strip_components: 1 }"])
        let hashed = try await project.run(["lock", "--hash"])
        try #require(hashed.exitCode == 0, "\(hashed.stderr)")
        let text = try String(contentsOf: project.file("syncr.lock"), encoding: .utf8)
        let sha = try await sha256(file: www.appending("t.tar.gz"))
        #expect(text.contains("sha256: \"\(sha)\"") && text.contains("unzip: true"), "\(text)")
        #expect(project.exists("out/t/a.txt"))
        let before = try await nginx.settledAccessLog().count
        let r = try await project.run(["apply", "--locked", "--progress", "none"])
        #expect(r.exitCode == 0 && r.stderr.contains("1 up to date"), "\(r.stderr)")
        #expect(try await nginx.settledAccessLog().count == before, "no request")
    }

    /// A folder unpacked before its archive was pinned is not kept on the record's word: the
    /// cached archive is checked against the pin (here the manifest's; a lock's is added the
    /// same way) and the folder is left as it was when it does not match.
    @Test func unpackedFolderIsCheckedAgainstAPinAddedLater() async throws {
        let (www, nginx) = try await Self.servedArchive()
        defer { nginx.stop() }
        let project = try Project()
        let entry = "url: \(nginx.url("/t.tar.gz")), to: out/t, unzip: true, strip_components: 1"
        try project.writeManifest(downloads: ["{ \(entry) }"])
        let first = try await project.run(["apply", "--progress", "none"])
        try #require(first.exitCode == 0, "\(first.stderr)")
        let wrong = String(repeating: "ab", count: 32)
        try project.writeManifest(downloads: ["{ \(entry), sha256: \(wrong) }"])
        let plan = try await project.run(["plan"])
        #expect(plan.stdout.contains("not checked against the sha256 pinned for it"), "\(plan.stdout)")
        let mismatch = try await project.run(["apply", "--progress", "none"])
        #expect(mismatch.exitCode == 1, "\(mismatch.stderr)")
        #expect(mismatch.stderr.lowercased().contains("sha256"), "\(mismatch.stderr)")
        #expect(try String(contentsOf: project.file("out/t/a.txt"), encoding: .utf8) == "hello\n", "the folder stays")
        let sha = try await sha256(file: www.appending("t.tar.gz"))
        try project.writeManifest(downloads: ["{ \(entry), sha256: \(sha) }"])
        let right = try await project.run(["apply", "--progress", "none"])
        #expect(right.exitCode == 0, "\(right.stderr)")
        let again = try await project.run(["plan"])
        #expect(again.stdout.contains("up to date (unpacked"), "\(again.stdout)")
    }

    /// A server that cannot be asked leaves no lock at all (a partial lock would pin half a
    /// manifest), and says which entry and why; an existing lock stays as it was.
    @Test func unreachableEntryWritesNoLock() async throws {
        let s = try await Self.setUp()
        defer { s.nginx.stop() }
        let env = Self.environment(s)
        let first = try await s.project.run(["lock"], environment: env)
        try #require(first.exitCode == 0, "\(first.stderr)")
        let before = try Self.lockText(s)
        try s.project.writeManifest(defaults: "{ retries: 0, timeout: 5s }", downloads: [
            "{ url: \"${LOCK_BASE}/a.bin?token=${LOCK_TOKEN}\", to: out/a.bin }",
            "{ url: \"\(s.nginx.url("/gone.bin"))\", to: out/gone.bin }",
        ])
        let r = try await s.project.run(["lock"], environment: env)
        #expect(r.exitCode == 1)
        #expect(r.stderr.contains("cannot lock out/gone.bin") && r.stderr.contains("404"), "\(r.stderr)")
        #expect(r.stderr.contains("syncr.lock was not written"))
        #expect(try Self.lockText(s) == before)
    }
}

/// `data.yml` and `data.yaml` share `data.lock`: the lock's `manifest:` says whose it is, and
/// neither `syncr lock` nor a run of one manifest takes the other's lock.
@Suite("lockfile owner", .timeLimit(.minutes(5)))
struct LockfileOwnerTests {
    /// A project with `data.yml` (a.bin) and `data.yaml` (b.bin) against nginx.
    static func setUp() async throws -> (Nginx, TemporaryDirectory, Project) {
        let www = try TemporaryDirectory(prefix: "www-lock-owner")
        _ = try makeFile(path: www.appending("a.bin"), size: 4000, seed: 31)
        _ = try makeFile(path: www.appending("b.bin"), size: 5000, seed: 32)
        let nginx = try await Nginx.start(root: www.url)
        let project = try Project()
        for (name, file) in [("data.yml", "a.bin"), ("data.yaml", "b.bin")] {
            try "version: 1\ndownloads:\n  - { url: \"\(nginx.url("/" + file))\", to: out/\(file) }\n"
                .write(to: project.file(name), atomically: true, encoding: .utf8)
        }
        return (nginx, www, project)
    }

    /// The second manifest's `syncr lock` leaves the first's lock alone (it wrote over it, and
    /// then the first's locked run said to run `syncr lock`, which wrote over the second's), and
    /// no run of one manifest takes the other's lock: exit 65, naming both.
    @Test func twoManifestsSharingALockfileAreRefused() async throws {
        let (nginx, www, project) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let first = try await project.run(["lock", "data.yml"])
        try #require(first.exitCode == 0, "\(first.stderr)")
        let written = try String(contentsOf: project.file("data.lock"), encoding: .utf8)
        #expect(written.contains("manifest: \"data.yml\""), "\(written)")

        let second = try await project.run(["lock", "data.yaml"])
        #expect(second.exitCode == 65, "\(second.stderr)")
        #expect(second.stderr == "syncr: error: data.lock is the lockfile of data.yml, which is beside it; the lock of "
            + "data.yaml would replace it (both manifests' lockfiles are named data.lock). Rename one of the two manifests "
            + "so that each has a lockfile of its own, or move data.lock away if data.yml needs no lock; data.lock was not written\n")
        #expect(try String(contentsOf: project.file("data.lock"), encoding: .utf8) == written, "left as it was")
        let hashed = try await project.run(["lock", "--hash", "data.yaml"])
        #expect(hashed.exitCode == 65 && !project.exists("out/b.bin"), "refused before anything is fetched: \(hashed.stderr)")

        let own = try await project.run(["plan", "--locked", "data.yml"])
        #expect(own.exitCode == 0, "\(own.stderr)")
        let before = try await nginx.settledAccessLog().count
        let problem = "data.lock is the lockfile of data.yml, not of data.yaml (both manifests' lockfiles are named "
            + "data.lock); rename one of the two manifests so that each has a lockfile of its own, then run 'syncr lock' "
            + "for the renamed one\n"
        for command in [["plan", "--locked"], ["apply", "--locked", "--progress", "none"], ["plan", "--locked", "--shard", "2/2"]] {
            let r = try await project.run(command + ["data.yaml"])
            #expect(r.exitCode == 65, "\(command): \(r.stderr)")
            #expect(Self.withoutShardLine(r.stderr) == "syncr: error: --locked: " + problem, "\(command): \(r.stderr)")
        }
        // Sharding by bytes reads the lock too.
        let shard = try await project.run(["apply", "--shard", "1/2", "--progress", "none", "data.yaml"])
        #expect(shard.exitCode == 65)
        #expect(Self.withoutShardLine(shard.stderr) == "syncr: error: --shard: " + problem, "\(shard.stderr)")
        #expect(try await nginx.settledAccessLog().count == before, "no request")
        #expect(!project.exists("out/b.bin"))
    }

    /// `stderr` without the line that names the shard (`syncr: shard 2/2 (--shard 2/2)`), said
    /// first by a sharded run whatever comes after it.
    private static func withoutShardLine(_ stderr: String) -> String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("syncr: shard ") }.joined(separator: "\n")
    }

    /// `manifest:` holds the manifest's file name, which is its path from the lock: the project
    /// locked as `ci/data.yml` from above, then moved elsewhere and run from its own folder,
    /// keeps its lock. A manifest renamed with its lock is told how to take the lock over, and
    /// `syncr lock` writes over the lock of a manifest that is gone.
    @Test func aMovedProjectKeepsItsLockAndARenamedOneIsTold() async throws {
        let (nginx, www, project) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        try FileManager.default.createDirectory(at: project.file("ci"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: project.file("data.yml"), to: project.file("ci/data.yml"))
        let lock = try await project.run(["lock", "ci/data.yml"])
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        #expect(try String(contentsOf: project.file("ci/data.lock"), encoding: .utf8).contains("manifest: \"data.yml\""))

        let moved = try Project()
        for name in ["data.yml", "data.lock"] {
            try FileManager.default.copyItem(at: project.file("ci/" + name), to: moved.file(name))
        }
        let r = try await moved.run(["plan", "--locked", "--shard", "1/1", "data.yml"])
        #expect(r.exitCode == 0, "\(r.stderr)")

        try FileManager.default.moveItem(at: moved.file("data.yml"), to: moved.file("syncr.yml"))
        try FileManager.default.moveItem(at: moved.file("data.lock"), to: moved.file("syncr.lock"))
        let renamed = try await moved.run(["plan", "--locked"])
        #expect(renamed.exitCode == 65)
        #expect(renamed.stderr == "syncr: error: --locked: syncr.lock was written for data.yml, not for syncr.yml, and "
            + "there is no such file; if it was renamed syncr.yml, run 'syncr lock syncr.yml' to lock it under its new name "
            + "(or set 'manifest: \"syncr.yml\"' in syncr.lock to keep what it locks)\n", "\(renamed.stderr)")
        let relock = try await moved.run(["lock"])
        #expect(relock.exitCode == 0, "\(relock.stderr)")
        #expect(relock.stderr.hasPrefix("syncr: note: syncr.lock was the lockfile of data.yml, which is not there; it now locks syncr.yml\n"),
                "\(relock.stderr)")
        #expect(try String(contentsOf: moved.file("syncr.lock"), encoding: .utf8).contains("manifest: \"syncr.yml\""))
        let locked = try await moved.run(["plan", "--locked"])
        #expect(locked.exitCode == 0, "\(locked.stderr)")
    }

    /// A lock that cannot be read is written over, saying so (it was replaced without a word),
    /// and a lock's `manifest:` is printed with its control characters escaped: it is the
    /// lock's text, which a terminal or a CI log must not take as commands or new lines.
    @Test func anUnreadableLockIsWrittenOverAndAForeignNameIsPrintable() async throws {
        let (nginx, www, project) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        try "version: 1\nentries: [".write(to: project.file("data.lock"), atomically: true, encoding: .utf8)
        let lock = try await project.run(["lock", "data.yml"])
        #expect(lock.exitCode == 0, "\(lock.stderr)")
        #expect(lock.stderr.hasPrefix("syncr: note: data.lock could not be read, and is written over; it said: data.lock"),
                "\(lock.stderr)")
        #expect(try String(contentsOf: project.file("data.lock"), encoding: .utf8).contains("manifest: \"data.yml\""))

        let text = try String(contentsOf: project.file("data.lock"), encoding: .utf8)
            .replacingOccurrences(of: "manifest: \"data.yml\"", with: "manifest: \"x\\u001B[2Jy.yml\"")
        try text.write(to: project.file("data.lock"), atomically: true, encoding: .utf8)
        let r = try await project.run(["plan", "--locked", "data.yml"])
        #expect(r.exitCode == 65, "\(r.stderr)")
        #expect(r.stderr.contains("x\\u{1B}[2Jy.yml") && !r.stderr.contains("\u{1B}"), "\(r.stderr)")
    }

    /// A link to the manifest under another name is the manifest: its lock is taken.
    @Test func aLinkToTheManifestIsTheManifest() async throws {
        let (nginx, www, project) = try await Self.setUp()
        defer { nginx.stop(); _ = www }
        let lock = try await project.run(["lock", "data.yml"])
        try #require(lock.exitCode == 0, "\(lock.stderr)")
        try FileManager.default.removeItem(at: project.file("data.yaml"))
        try FileManager.default.createSymbolicLink(atPath: project.file("data.yaml").path, withDestinationPath: "data.yml")
        let r = try await project.run(["plan", "--locked", "data.yaml"])
        #expect(r.exitCode == 0, "\(r.stderr)")
        let again = try await project.run(["lock", "data.yaml"])
        #expect(again.exitCode == 0, "\(again.stderr)")
    }
}

/// `cache: .` puts the cache's own lock file at `syncr.lock` beside `syncr.yml`, the lockfile's
/// name: neither `syncr lock` nor `apply` may write one over the other. Such a cache is refused
/// as the manifest is read (`ManifestInputTests`), so neither gets that far.
@Suite(.timeLimit(.minutes(5)))
struct LockfileNameClashTests {
    @Test func cacheInTheManifestsFolderIsRefused() async throws {
        let harness = try CLIHarness()
        let closed = try CLIHarness.closedPort()
        try harness.write("syncr.yml", """
            version: 1
            cache: .
            downloads:
              - { url: "http://127.0.0.1:\(closed)/a.bin", to: out/a.bin }
            """)
        let lock = try await harness.run(["lock"])
        #expect(lock.status == 65)
        #expect(lock.stderr.contains("cache: \".\": it is the manifest's own folder"), "\(lock.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/syncr.lock"))

        let written = "# Written by 'syncr lock' from syncr.yml.\nversion: 1\ndownloads: []\n"
        try harness.write("syncr.lock", written)
        let apply = try await harness.run(["apply", "--progress", "none"])
        #expect(apply.status == 65)
        #expect(apply.stderr.contains("cache: \".\": it is the manifest's own folder"), "\(apply.stderr)")
        #expect(try String(contentsOfFile: harness.folder + "/syncr.lock", encoding: .utf8) == written, "left as it was")
    }
}
