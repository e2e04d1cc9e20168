import Foundation
import Testing
@testable import SyncrCore
import SyncrDigest
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// How many entries ask their servers at once in `apply`: as many as `plan` asks
/// (`max(jobs, 16)`). It once asked with every entry in flight (`jobs + 64`), which only queued
/// the requests beyond the per-host connections in curl.
@Suite(.timeLimit(.minutes(10)))
struct ApplyConcurrencyTests {
    /// The scripted server, with each answer taking a moment so that requests overlap, and the
    /// most requests seen at once.
    ///
    /// With `gathering`, the first answers wait until that many requests are in flight at once
    /// (or, for a client that never sends that many, 5 s have passed): how many a client has
    /// out at once then does not depend on how fast this machine starts its tasks. A 5 ms pause
    /// alone saw 4 of 16 under ThreadSanitizer on a busy machine.
    final class Overlapping: Transport, Sendable {
        let inner: ScriptedTransport
        private let gathering: Int
        private let counts = Locked((now: 0, most: 0, open: false))

        init(_ inner: ScriptedTransport, gathering: Int = 0) {
            self.inner = inner
            self.gathering = gathering
        }

        var most: Int { counts.withLock { $0.most } }

        func attempt(_ request: HTTPRequest, sink: ResponseSink) async -> TransferOutcome {
            let gathering = self.gathering
            counts.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
                if $0.now >= gathering { $0.open = true }
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while !counts.withLock({ $0.open }) {
                if ContinuousClock.now >= deadline { counts.withLock { $0.open = true } }
                try? await Task.sleep(for: .milliseconds(1))
            }
            try? await Task.sleep(for: .milliseconds(5))
            let outcome = await inner.attempt(request, sink: sink)
            counts.withLock { $0.now -= 1 }
            return outcome
        }
    }

    @Test func aNoOpRunAsksAsManyServersAtATimeAsPlan() async throws {
        let project = try ScriptedProject()
        let file = Resource(bytes: Resource.pattern(100))
        let downloads = (0..<60).map { project.download("f\($0).bin", index: $0) }
        let manifest = project.manifest(downloads)
        let first = Session(manifest: manifest, transport: ScriptedTransport(serving: file))
        #expect(await first.apply().results.allSatisfy { $0.status == .ok })
        first.close()

        let width = Session.questionWidth(jobs: manifest.defaults.jobs)
        #expect(width == 16)
        let server = Overlapping(ScriptedTransport(serving: file), gathering: width)
        let second = Session(manifest: manifest, transport: server)
        defer { second.close() }
        let results = await second.apply().results
        #expect(results.allSatisfy { $0.status == .skipped })
        #expect(server.inner.requests.count == 60 && server.inner.requests.allSatisfy { $0.method == .head })
        #expect(server.most <= width, "\(server.most) requests at once, at most \(width) expected")
        #expect(server.most > manifest.defaults.jobs, "more questions than transfers at once")
    }

    /// Applies 200 fresh downloads of a small file with `jobs: 16` (each pinned by its SHA-256
    /// when `checked`), checks that all arrived and never more than `jobs` at once, and returns
    /// how many network slots and turns passed from one task to another.
    private func applyTwoHundred(checked: Bool) async throws -> (slots: Int, turns: Int) {
        let project = try ScriptedProject()
        let file = Resource(bytes: Resource.pattern(100))
        let checksums: [Checksum] = checked ? [.sha256(Digest.hex(.sha256, of: file.bytes))] : []
        var manifest = project.manifest((0..<200).map { project.download("f\($0).bin", index: $0, checksums: checksums) })
        manifest.defaults.jobs = 16
        let server = Overlapping(ScriptedTransport(serving: file))
        let session = Session(manifest: manifest, transport: server)
        defer { session.close() }
        #expect(await session.apply().results.allSatisfy { $0.status == .ok })
        #expect(server.most <= 16, "\(server.most) transfers at once, at most jobs expected")
        return (await session.slots.handedOver, await session.turns.handedOver)
    }

    /// A worker keeps its turn from one small file to the next, and with `jobs` of at least the
    /// questions' width every worker with a turn finds a network slot free: no entry waits for
    /// a slot or a turn that another has just let go (each such wait woke another task). Only
    /// the workers beyond the turns, which wait before they take any entry, are handed one.
    @Test func aWorkerKeepsItsTurnFromOneQuickEntryToTheNext() async throws {
        let (slots, turns) = try await applyTwoHundred(checked: false)
        #expect(slots == 0, "\(slots) network slots handed from one entry to another")
        #expect(turns <= Session.finishing, "\(turns) turns handed from one worker to another for 200 files")
    }

    /// A slow last step (here the check of the manifest's SHA-256) gives the turn back first, so
    /// that another worker downloads the next file meanwhile.
    @Test func aSlowLastStepGivesTheTurnBackFirst() async throws {
        let turns = try await applyTwoHundred(checked: true).turns
        #expect(turns > Session.finishing + 16, "\(turns) turns handed over for 200 checked files: the checks kept them")
    }
}
