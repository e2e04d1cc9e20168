import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// A server nobody answers for costs one entry's retries, not every entry's: the scripted
/// server refuses every connection to one host and serves another.
@Suite(.timeLimit(.minutes(10)))
struct UnreachableHostsTests {
    @Test func aServerThatRefusesEveryConnectionCostsOneEntrysRetries() async throws {
        let project = try ScriptedProject(retries: 1)
        let file = Resource(bytes: Resource.pattern(100))
        var downloads = (0..<8).map { project.download("down\($0).bin", index: $0) }
        var up = project.download("up.bin", index: 8)
        up.url = Template(literal: "http://other.test/up.bin")
        downloads.append(up)
        let server = ScriptedTransport { request, _ in
            request.url.hasPrefix("http://other.test/") ? file.answer(request) : .refused(request.displayURL)
        }
        let session = Session(manifest: project.manifest(downloads), transport: server)
        defer { session.close() }
        let results = await session.apply().results

        #expect(results[8].status == .ok, "another server is not affected: \(results[8].errorText ?? "")")
        let down = results[0..<8]
        #expect(down.allSatisfy { $0.status == .failed })
        let stopped = down.filter { $0.errorText?.contains("stopped: another entry used up its retries on this server") == true }
        let gaveUp = down.filter { $0.errorText?.contains("gave up after 1 retry") == true }
        // `jobs: 4`: the entries under way when the first gave up may still finish their own
        // retries; those after them are not tried at all.
        #expect(gaveUp.count >= 1 && gaveUp.count <= 4, "\(down.map { $0.errorText ?? "" })")
        #expect(stopped.count == 8 - gaveUp.count)
        let refused = server.requests.filter { !$0.url.hasPrefix("http://other.test/") }
        #expect(refused.count <= 2 * gaveUp.count + stopped.count, "\(refused.count) attempts")
        #expect(stopped.allSatisfy { $0.errorText?.contains("down") == true && $0.errorText?.contains("connection") == true })

        // The next apply of the same session asks again: the server may be back.
        let before = server.requests.count
        _ = await session.apply()
        #expect(server.requests.count >= before + 2, "the next run tries the server again")
    }

    /// Entries redirected to a server that is down: the one nobody answered for is the
    /// target, so one entry's retries are spent on it, not every entry's; the entries' own
    /// server, which answered, stays usable, and an entry that asks the target directly
    /// learns it is down without asking.
    @Test func aRedirectTargetThatRefusesEveryConnectionCostsOneEntrysRetries() async throws {
        let project = try ScriptedProject(retries: 1)
        let file = Resource(bytes: Resource.pattern(100))
        var downloads = (0..<8).map { project.download("moved\($0).bin", index: $0) }
        var direct = project.download("direct.bin", index: 8)
        direct.url = Template(literal: "http://cdn.test/direct.bin")
        var origin = project.download("origin.bin", index: 9)
        origin.url = Template(literal: "http://origin.test/origin.bin")
        downloads += [direct, origin]
        let server = ScriptedTransport { request, _ in
            if request.url.hasPrefix("http://origin.test/") { return file.answer(request) }
            if request.url.hasPrefix("http://cdn.test/") { return .refused(request.displayURL) }
            let target = "http://cdn.test/moved.bin"
            return Reply(status: 0, failure: .connection(url: request.displayURL + " (redirected to \(target))", code: 7,
                                                         message: "Failed to connect: connection refused", redirectedTo: target))
        }
        let session = Session(manifest: project.manifest(downloads), transport: server)
        defer { session.close() }
        let results = await session.apply().results

        #expect(results[9].status == .ok, "the server that redirected answered: \(results[9].errorText ?? "")")
        let moved = results[0..<8]
        #expect(moved.allSatisfy { $0.status == .failed && $0.errorText?.contains("(redirected to http://cdn.test/moved.bin)") == true })
        let gaveUp = moved.filter { $0.errorText?.contains("gave up after 1 retry") == true }
        let stopped = moved.filter { $0.errorText?.contains("stopped: another entry used up its retries") == true }
        #expect(gaveUp.count >= 1 && stopped.count == 8 - gaveUp.count, "\(moved.map { $0.errorText ?? "" })")
        // `jobs: 4`: the entries holding the four slots may each spend their retries; an entry
        // that starts once the target is known to be down makes its one attempt (the target may
        // have come back), no more. Which entries start first is the scheduler's: origin.bin
        // may take a slot early and free it at once, so five moved entries may start before
        // any gave up, and at least three start after.
        let asked = (0..<8).map { index in server.requests.filter { $0.url.hasSuffix("/moved\(index).bin") }.count }
        #expect(asked.allSatisfy { $0 <= 2 } && asked.filter { $0 == 1 }.count >= 3, "asked: \(asked)")
        #expect(results[8].errorText?.contains("stopped: another entry used up its retries") == true,
                "\(results[8].errorText ?? "")")
        #expect(!server.requests.contains { $0.url.hasPrefix("http://cdn.test/") }, "the target is not asked directly")
    }

    @Test func anAnswerMakesTheServerReachableAgain() {
        let hosts = UnreachableHosts()
        let refused = TransferError.connection(url: "u", code: 7, message: "refused")
        hosts.gaveUp(on: "https://user:pw@Example.COM:8443/a?x", after: refused)
        #expect(hosts.failure(for: "https://example.com:8443/b") == refused)
        #expect(hosts.failure(for: "https://example.com/b") == nil, "another port is another server")
        hosts.reached("https://example.com:8443/c")
        #expect(hosts.failure(for: "https://example.com:8443/b") == nil)
        hosts.gaveUp(on: "https://example.com:8443/a", after: .timedOut(url: "u", message: "slow"))
        #expect(hosts.failure(for: "https://example.com:8443/b") == nil, "a timeout may be a slow server")
    }

    @Test(arguments: [
        ("http://h/p", "http://h"), ("HTTPS://U:P@Host:1/p?q#f", "https://host:1"), ("http://h?q", "http://h"),
        ("s3://bucket/key", "s3://bucket"), ("http://[::1]:8080/x", "http://[::1]:8080"),
    ])
    func origins(url: String, origin: String) {
        #expect(UnreachableHosts.origin(of: url) == origin)
    }
}
