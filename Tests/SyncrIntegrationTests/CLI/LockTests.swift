#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// One `apply` at a time per cache folder: a second run exits 75 naming the first run's PID,
/// or with `--lock-timeout` waits for it; `plan` never waits.
///
/// The first run is held mid-download by a fault-server stall, released by the test once it
/// has seen what it needs: no timing involved.
@Suite("cache lock", .timeLimit(.minutes(5)))
struct LockTests {
    /// A project whose download stalls after 1000 bytes until `release()`.
    struct Held {
        let www: TemporaryDirectory
        let server: FaultServer
        let project: Project

        init() async throws {
            www = try TemporaryDirectory(prefix: "www")
            try makeFile(path: www.appending("a.bin"), size: 200_000, seed: 21)
            server = try await FaultServer.start(root: www.url)
            try await server.behave(path: "/a.bin", FaultBehaviour(stallAfter: 1000, stallTimes: 1))
            project = try Project()
            try project.writeManifest(defaults: "{ retries: 3, timeout: 60s, connections: 1 }",
                                      downloads: ["{ url: \(server.url("/a.bin")), to: a.bin }"])
        }

        /// Starts `apply` and returns once it holds the lock (its start line is printed after).
        func startFirst() async throws -> BackgroundSyncr {
            let first = try BackgroundSyncr(project, ["apply"])
            try #require(await first.waitForStderr("] download "), "the first run should start: \(first.stderr)")
            return first
        }

        func release() async throws {
            try await server.release(path: "/a.bin")
        }
    }

    @Test func secondRunExits75NamingTheFirst() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        // An earlier run's reports must not pass for this refused one's (CI publishes them).
        try "earlier".write(to: held.project.file("r.json"), atomically: true, encoding: .utf8)
        try "earlier".write(to: held.project.file("j.xml"), atomically: true, encoding: .utf8)
        let second = try await held.project.run(["apply", "--report", "r.json", "--junit", "j.xml"])
        #expect(second.exitCode == 75, "\(second.stderr)")
        #expect(!held.project.exists("r.json") && !held.project.exists("j.xml"))
        #expect(second.stderr.contains("another syncr run (PID \(first.pid)) is using the cache "), "\(second.stderr)")
        #expect(second.stderr.contains("--lock-timeout"), "says how to wait instead")
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
        #expect(try await sha256(file: held.project.file("a.bin")) == (try await sha256(file: held.www.appending("a.bin"))))
    }

    /// `cache prune` could delete the partial a running apply writes: it takes the same lock.
    @Test func pruneExits75WhileARunHoldsTheCache() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        let prune = try await held.project.run(["cache", "prune"])
        #expect(prune.exitCode == 75, "\(prune.stderr)")
        #expect(prune.stderr.contains("another syncr run (PID \(first.pid)) is using the cache "), "\(prune.stderr)")
        // prune takes no --lock-timeout: its advice must not name it.
        #expect(prune.stderr.contains("run this command again once it has finished") && !prune.stderr.contains("--lock-timeout"),
                "\(prune.stderr)")
        let dry = try await held.project.run(["cache", "prune", "--dry-run"])
        #expect(dry.exitCode == 0, "--dry-run removes nothing and takes no lock: \(dry.stderr)")
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
        #expect(try await sha256(file: held.project.file("a.bin")) == (try await sha256(file: held.www.appending("a.bin"))))
    }

    @Test func lockTimeoutWaitsForTheFirstRunThenSucceeds() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        let second = try BackgroundSyncr(held.project, ["apply", "--lock-timeout", "2m"])
        #expect(await second.waitForStderr("waiting up to 2m for another syncr run (PID \(first.pid))"), "\(second.stderr)")
        #expect(second.child.isRunning, "it waits")
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
        #expect(await second.finish() == 0, "\(second.stderr)")
        #expect(second.stderr.contains("1 up to date"), "the second run sees the first one's work: \(second.stderr)")
    }

    @Test func lockTimeoutRunsOut() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        let second = try await held.project.run(["apply", "--lock-timeout=1s"])
        #expect(second.exitCode == 75, "\(second.stderr)")
        #expect(second.stderr.contains("another syncr run (PID \(first.pid)) still held the cache "), "\(second.stderr)")
        #expect(second.stderr.contains("after waiting 1s"))
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
    }

    /// `plan` only reads, so it takes no lock and answers while an apply runs: the apply is
    /// still held (it cannot end before `release()`, bar its 60 s timeout) when plan is done.
    @Test func planDoesNotWaitForARunningApply() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        let plan = try await held.project.run(["plan"])
        #expect(first.child.isRunning, "plan answered while the apply held the lock: \(first.stderr)")
        #expect(try await held.server.stats()["/a.bin"].gets == 1, "the apply has not given up on its stalled GET")
        #expect(plan.exitCode == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("a.bin"))
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
    }

    /// Interrupting a run that waits for the lock ends it like any interruption.
    @Test func sigintWhileWaitingForTheLockExits130() async throws {
        let held = try await Held()
        defer { held.server.stop() }
        let first = try await held.startFirst()
        let second = try BackgroundSyncr(held.project, ["apply", "--lock-timeout", "10m"])
        #expect(await second.waitForStderr("waiting up to 10m"), "\(second.stderr)")
        second.signal(SIGINT)
        #expect(await second.finish() == 130, "\(second.stderr)")
        try await held.release()
        #expect(await first.finish() == 0, "\(first.stderr)")
    }

    @Test(arguments: [
        ["apply", "--lock-timeout", "5"],
        ["apply", "--lock-timeout", "soon"],
        ["apply", "--lock-timeout"],
        ["plan", "--lock-timeout", "5s"],
    ])
    func badLockTimeoutIsAUsageError(arguments: [String]) async throws {
        let r = try await CLIHarness().run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains("'--lock-timeout'"), "\(r.stderr)")
    }

    @Test func helpDocumentsTheLockAndTheInterruptionCodes() async throws {
        let overview = try await CLIHarness().run(["help"])
        #expect(overview.stdout.contains("\n  75  "))
        #expect(overview.stdout.contains("\n  130 "))
        let apply = try await CLIHarness().run(["apply", "--help"])
        #expect(apply.stdout.contains("--lock-timeout TIME"))
    }
}
