import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// The retry helper on the requests `plan` makes (HEAD, and the ranged GET that stands in for a
/// refused HEAD), against a scripted server: each test names the server behaviour it scripts.
@Suite(.timeLimit(.minutes(10)))
struct ProbeRetryTests {
    static let file = Resource(bytes: Resource.pattern(1000))

    @Test func status503WithRetryAfterThen200() async throws {
        let project = try ScriptedProject(retries: 1)
        let server = ScriptedTransport { request, number in
            number == 1 ? .status(503, ["Retry-After": "0"]) : Self.file.answer(request)
        }
        let item = await project.plan(project.download("f.bin"), over: server)
        #expect(item.action == .download, "\(item.reason)")
        #expect(item.size == 1000)
        #expect(server.requests.map(\.method) == [.head, .head])
    }

    @Test func connectionRefusedEveryTimeUntilTheRetriesAreSpent() async throws {
        let project = try ScriptedProject(retries: 2)
        let server = ScriptedTransport { request, _ in .refused(request.displayURL) }
        let item = await project.plan(project.download("f.bin"), over: server)
        #expect(item.action == .error)
        #expect(item.reason.contains("connection refused") && item.reason.contains("gave up after 2 retries"), "\(item.reason)")
        #expect(server.requests.count == 3)
    }

    @Test func status404IsNotAskedAgain() async throws {
        let project = try ScriptedProject(retries: 5)
        let server = ScriptedTransport { _, _ in .status(404, body: "<h1>no such file</h1>") }
        let item = await project.plan(project.download("f.bin"), over: server)
        #expect(item.action == .error)
        #expect(item.reason.contains("HTTP 404") && item.reason.contains("no such file"), "\(item.reason)")
        #expect(server.requests.count == 1)
    }

    @Test func serverRefusesHEADWith405SoARangedGETAsks() async throws {
        let project = try ScriptedProject()
        let server = ScriptedTransport { request, _ in
            request.method == .head ? .status(405) : Self.file.answer(request)
        }
        let item = await project.plan(project.download("f.bin"), over: server)
        #expect(item.action == .download, "\(item.reason)")
        #expect(item.size == 1000 && item.remote?.acceptsRanges == true)
        #expect(server.requests.map { "\($0.method.rawValue) \($0.rangeText)" } == ["HEAD -", "GET bytes=0-0"])
    }
}
