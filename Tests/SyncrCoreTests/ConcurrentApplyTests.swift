import Foundation
import Testing
@testable import SyncrCore
import SyncrLock

/// Two `apply` calls on one session at once moved each other's files ("cannot move the finished
/// file into place: No such file or directory"): the second now waits for the first, and both
/// end well, the second finding everything up to date.
@Suite(.timeLimit(.minutes(5))) struct ConcurrentApplyTests {
    @Test func twoAppliesOnOneSessionRunOneAfterTheOther() async throws {
        let project = try ScriptedProject()
        let files = (0..<8).map { Resource(bytes: Resource.pattern(40_000, seed: UInt8($0))) }
        let server = ScriptedTransport { request, _ in
            let n = Int(request.url.split(separator: "/").last!.dropFirst().prefix { $0.isNumber })!
            return files[n].answer(request)
        }
        let downloads = (0..<8).map { project.download("f\($0).bin", index: $0) }
        let session = Session(manifest: project.manifest(downloads), transport: server)
        defer { session.close() }
        async let first = session.apply()
        async let second = session.apply()
        let (a, b) = await (first, second)
        let statuses = [a, b].map { $0.results.map(\.status) }
        #expect(statuses.contains(Array(repeating: .ok, count: 8)), "\(statuses)")
        #expect(statuses.allSatisfy { $0.allSatisfy { $0 == .ok || $0 == .skipped } }, "\(statuses)")
        for (n, file) in files.enumerated() { #expect(project.contents("f\(n).bin") == file.bytes) }
    }
}
