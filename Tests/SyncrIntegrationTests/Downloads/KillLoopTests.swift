#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `syncr apply` killed with SIGKILL over and over while many small files land: their records
/// are lines of one journal (`records.journal`), appended concurrently, and a kill can land in
/// the middle of any of them. Whatever each kill leaves, the next run finishes with every file
/// right, and the run after that finds every entry up to date.
@Suite("kill loop", .timeLimit(.minutes(5)))
struct KillLoopTests {
    static let count = 240

    /// Starts `apply` and kills it after a delay drawn from `random`, `rounds` times; a run that
    /// finishes before its kill is fine. Returns how many runs the kill cut short.
    ///
    /// It waits without holding a thread of Swift's pool (a `usleep` and `waitUntilExit` here
    /// held one for seconds).
    static func killLoop(_ project: Project, rounds: Int, random: inout SystemRandomNumberGenerator) async throws -> Int {
        var killed = 0
        for _ in 0..<rounds {
            let child = try project.start(["apply"])
            try await Task.sleep(for: .microseconds(Int.random(in: 20_000...250_000, using: &random)))
            kill(child.pid, SIGKILL)
            await child.ended()
            if child.process.terminationReason == .uncaughtSignal { killed += 1 }
        }
        return killed
    }

    static func expectEveryFileRight(_ project: Project, _ www: TemporaryDirectory) throws {
        for i in 0..<count {
            let got = FileManager.default.contents(atPath: project.file("out/f\(i).bin").path)
            let want = FileManager.default.contents(atPath: www.appending("f\(i).bin").path)
            #expect(got != nil && got == want, "out/f\(i).bin")
        }
    }

    @Test func killedOverAndOverThenEveryFileIsRightAndUpToDate() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        for i in 0..<Self.count {
            try makeFile(path: www.appending("f\(i).bin"), size: 3000 + i * 97, seed: UInt64(i + 1))
        }
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ jobs: 16, retries: 3, timeout: 5s }",
                                  downloads: (0..<Self.count).map { "{ url: \(nginx.url("/f\($0).bin")), to: out/f\($0).bin }" })
        var random = SystemRandomNumberGenerator()
        #expect(try await Self.killLoop(project, rounds: 6, random: &random) > 0, "no run was cut short")

        // A third of the files change on the server: their complete records are ended
        // (tombstones) and the files fetched again, under more kills.
        let first = try await project.run(["apply"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        for i in stride(from: 0, to: Self.count, by: 3) {
            try makeFile(path: www.appending("f\(i).bin"), size: 3000 + i * 97 + 11, seed: UInt64(1000 + i))
        }
        #expect(try await Self.killLoop(project, rounds: 6, random: &random) > 0, "no run was cut short")

        let last = try await project.run(["apply"])
        #expect(last.exitCode == 0, "\(last.stderr)")
        try Self.expectEveryFileRight(project, www)
        let again = try await project.run(["apply"])
        #expect(again.exitCode == 0)
        #expect(again.stderr.contains("0 transferred, \(Self.count) up to date"), "\(again.stderr)")
    }
}
