import Foundation
// Not @testable: this file sees SyncrCore and SyncrManifest as any other program does (Swift
// decides per file whether internal symbols are visible), so every line below is a use of the
// public API.
import SyncrCore
import SyncrManifest
import Testing

/// SyncrCore as a library: a Swift program loads a manifest, plans, applies with a progress
/// handler, and switches over typed results, against a real nginx on 127.0.0.1.
@Suite("library API", .timeLimit(.minutes(5)))
struct LibraryAPITests {
    /// What a caller's progress handler saw, from many tasks at once.
    final class Events: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var events: [ProgressEvent] = []

        func add(_ event: ProgressEvent) {
            lock.withLock { events.append(event) }
        }

        var all: [ProgressEvent] { lock.withLock { events } }

        /// The results of the `.finished` events, by download index.
        var finished: [Int: ItemResult] {
            var results: [Int: ItemResult] = [:]
            for case .finished(let result) in all { results[result.item.index] = result }
            return results
        }

        /// The download indexes of the `.started` events.
        var started: Set<Int> {
            var indexes: Set<Int> = []
            for case .started(let item) in all where item.kind == .download { indexes.insert(item.index) }
            return indexes
        }
    }

    /// A folder with a manifest of three downloads from nginx: one good file, one whose
    /// manifest checksum is wrong, one the server does not have.
    struct Fixture {
        let www: TemporaryDirectory
        let project: TemporaryDirectory
        let nginx: Nginx
        let goodSHA: String
        let wrongSHA = String(repeating: "0", count: 64)

        init() async throws {
            www = try TemporaryDirectory(prefix: "www-library")
            project = try TemporaryDirectory(prefix: "library")
            try makeFile(path: www.appending("good.bin"), size: 70_000, seed: 11)
            try makeFile(path: www.appending("changed.bin"), size: 30_000, seed: 12)
            goodSHA = try await sha256(file: www.appending("good.bin"))
            nginx = try await Nginx.start(root: www.url)
            let manifest = """
                version: 1
                cache: cache
                defaults:
                  retries: 0
                downloads:
                  - url: \(nginx.url("/good.bin"))
                    to: out/good.bin
                    sha256: \(goodSHA)
                  - url: \(nginx.url("/changed.bin"))
                    to: out/changed.bin
                    sha256: \(wrongSHA)
                  - url: \(nginx.url("/missing.bin"))
                    to: out/missing.bin
                """
            try Data(manifest.utf8).write(to: project.appending("syncr.yml"))
        }

        func load() throws -> Manifest {
            try ManifestLoader.load(path: project.appending("syncr.yml").path, environment: [:])
        }
    }

    /// plan: typed kinds and actions, and the missing file's error is `.http(status: 404, ...)`
    /// naming its URL, with no retry and nothing kept; its reason is that error's message.
    @Test func planGivesTypedItems() async throws {
        ProcessSetup.prepare()
        let fixture = try await Fixture()
        defer { fixture.nginx.stop() }
        let session = Session(manifest: try fixture.load())
        defer { session.close() }

        let plan = await session.plan()

        #expect(plan.items.map(\.kind) == [.download, .download, .download])
        #expect(plan.items.map(\.action) == [.download, .download, .error])
        #expect(plan.items[0].error == nil && plan.items[1].error == nil)
        let missing = try #require(plan.items[2].error)
        guard case .http(status: 404, let url, _, let retries, _, _) = missing else {
            Issue.record("a missing file plans as an HTTP 404, got \(missing)")
            return
        }
        #expect(url == fixture.nginx.url("/missing.bin"))
        #expect(retries == SyncError.Retries(stop: .notRetryable, kept: 0))
        #expect(plan.items[2].reason == missing.description)
        #expect(missing.description.contains("HTTP 404 Not Found"), "\(missing)")
        #expect(missing.code == "http" && missing.httpStatus == 404)
        // Results compare as values: a second plan of the same state is the same plan.
        let again = await session.plan()
        #expect(again == plan)
        var other = again.items[0]
        other.reason += "!"
        #expect(other != again.items[0])
    }

    /// apply with a progress handler: the good file lands and is `.ok`; the wrong checksum is
    /// `.checksumMismatch` with both digests and the destination left absent; the missing file
    /// is `.http(status: 404, ...)`. The handler saw each entry start and finish, with the
    /// outcomes the report gives.
    @Test func applyWithAProgressHandlerGivesTypedOutcomes() async throws {
        ProcessSetup.prepare()
        let fixture = try await Fixture()
        defer { fixture.nginx.stop() }
        let session = Session(manifest: try fixture.load())
        defer { session.close() }
        let events = Events()

        let report = await session.apply { event in events.add(event) }

        try #require(report.results.count == 3)
        #expect(report.results[0].outcome == .ok)
        #expect(report.results[0].transferred == 70_000)
        #expect(try await sha256(file: fixture.project.appending("out/good.bin")) == fixture.goodSHA)

        switch report.results[1].outcome {
        case .failed(.checksumMismatch(let url, let algorithm, let expected, let actual, let destination)):
            #expect(url == fixture.nginx.url("/changed.bin"))
            #expect(algorithm == "sha256")
            #expect(expected == fixture.wrongSHA)
            #expect(actual == (try await sha256(file: fixture.www.appending("changed.bin"))))
            #expect(destination == "out/changed.bin")
        default:
            Issue.record("a wrong checksum fails as .checksumMismatch, got \(report.results[1].outcome)")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.project.appending("out/changed.bin").path))

        switch report.results[2].outcome {
        case .failed(.http(let status, let url, _, let retries, _, _)):
            #expect(status == 404)
            #expect(url == fixture.nginx.url("/missing.bin"))
            #expect(retries.stop == .notRetryable)
        default:
            Issue.record("a missing file fails as .http(status: 404), got \(report.results[2].outcome)")
        }
        #expect(report.failed.map(\.item.index) == [1, 2])
        #expect(report.results.map(\.status) == [.ok, .failed, .failed])

        #expect(events.started == [0, 1, 2])
        let finished = events.finished
        #expect(finished.count == 3)
        for result in report.results {
            #expect(finished[result.item.index]?.outcome == result.outcome, "the handler saw the report's outcome")
            // The event's result is the report's, but for the server's answer (the report drops it).
            var seen = try #require(finished[result.item.index])
            seen.item.remote = nil
            #expect(seen == result)
        }
    }

    /// An up-to-date entry's `.finished` event carries what the server said; the report, which
    /// keeps every entry's result to the end of the run, does not (memory per entry).
    @Test func theServersAnswerIsInTheFinishedEventNotTheReport() async throws {
        ProcessSetup.prepare()
        let fixture = try await Fixture()
        defer { fixture.nginx.stop() }
        let session = Session(manifest: try fixture.load())
        defer { session.close() }
        _ = await session.apply()
        let events = Events()
        let again = await session.apply { event in events.add(event) }
        try #require(again.results.count == 3)
        #expect(again.results[0].outcome == .skipped)
        #expect(again.results[0].item.remote == nil)
        #expect(events.finished[0]?.item.remote?.size == 70_000, "\(String(describing: events.finished[0]))")
    }

    /// A server that stays busy (503): the handler sees a typed `.retrying` event whose error
    /// will be retried, and the entry fails as `.http(status: 503, ...)` with its retries used up.
    @Test func retriesAreTypedEvents() async throws {
        ProcessSetup.prepare()
        let www = try TemporaryDirectory(prefix: "www-library-busy")
        try makeFile(path: www.appending("busy.bin"), size: 1000, seed: 13)
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/busy.bin", FaultBehaviour(status: 503, retryAfter: "0"))
        let project = try TemporaryDirectory(prefix: "library-busy")
        try Data("""
            version: 1
            cache: cache
            defaults:
              retries: 1
            downloads:
              - url: \(server.url("/busy.bin"))
                to: out/busy.bin
            """.utf8).write(to: project.appending("syncr.yml"))
        let session = Session(manifest: try ManifestLoader.load(path: project.appending("syncr.yml").path, environment: [:]))
        defer { session.close() }
        let events = Events()

        let report = await session.apply { event in events.add(event) }

        let url = server.url("/busy.bin")
        var retries: [SyncError] = []
        for case .retrying(index: 0, attempt: 1, _, let error, kind: .download, object: nil) in events.all { retries.append(error) }
        #expect(retries.count == 1)
        if let error = retries.first {
            guard case .http(status: 503, url: url, _, retries: .willRetry, _, _) = error else {
                Issue.record("the retried attempt is an HTTP 503 that will be retried, got \(error)")
                return
            }
        }
        let outcome = try #require(report.results.first?.outcome)
        guard case .failed(let error) = outcome, case .http(status: 503, url: url, _, let loop, _, _) = error else {
            Issue.record("a server that stays busy fails the entry as an HTTP 503, got \(outcome)")
            return
        }
        #expect(loop == SyncError.Retries(stop: .exhausted(retries: 1), kept: 0))
        #expect(error.code == "http" && error.httpStatus == 503)
        #expect(error.description.hasSuffix("(gave up after 1 retry)"), "\(error)")
    }

    /// The example of README.md's "As a Swift library", word for word: it must compile against
    /// the public API. Not run: it reads `syncr.yml` from the current folder.
    static func readmeExample() async throws {
        ProcessSetup.prepare()  // once, before any request
        let manifest = try ManifestLoader.load(path: "syncr.yml", environment: ProcessInfo.processInfo.environment)
        let session = Session(manifest: manifest, options: RunOptions(jobs: 8))
        defer { session.close() }

        let plan = await session.plan()
        for item in plan.items where item.action == .error { print("cannot plan \(item.kind) \(item.index): \(item.reason)") }
        for case .notEnoughSpace(let folder, let needed, _) in plan.warnings { print("\(folder): \(needed) bytes needed") }

        let report = await session.apply { event in  // called from many tasks at once
            if case .retrying(let index, let attempt, _, let error, .download, _) = event {
                print("downloads[\(index)]: attempt \(attempt) failed: \(error)")
            }
        }
        for result in report.results {
            switch result.outcome {
            case .ok, .skipped: break
            case .failed(.http(status: 404, let url, _, _, _, _)): print("gone: \(url)")
            case .failed(.checksumMismatch(let url, let algorithm, _, _, _)): print("\(url): \(algorithm) differs")
            case .failed(let error): print("\(error.code): \(error)")  // the CLI's message
            case .interrupted(let interruption): print("interrupted: \(interruption)")
            }
        }
        for warning in report.warnings { print("warning: \(warning)") }  // a folder or record flush failed
    }

    /// A run cancelled before it starts (what SIGINT does to the CLI's task): every entry is
    /// `.interrupted(.beforeStart)` (it said `.download(kept: 0)`, as if it had begun), and
    /// nothing is fetched.
    @Test func aCancelledApplyInterruptsEveryEntry() async throws {
        ProcessSetup.prepare()
        let fixture = try await Fixture()
        defer { fixture.nginx.stop() }
        let session = Session(manifest: try fixture.load())
        defer { session.close() }

        let report = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await session.apply()
        }.value

        #expect(report.results.map(\.outcome) == Array(repeating: .interrupted(.beforeStart), count: 3))
        #expect(report.results.map(\.error) == Array(repeating: .interrupted(.beforeStart), count: 3))
        #expect(report.interrupted.count == 3)
        #expect(report.transferred == 0)
        #expect(report.results[0].error?.description == "interrupted before it started")
        #expect(try fixture.nginx.accessLog().isEmpty, "nothing was asked")
    }
}
