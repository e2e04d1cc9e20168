#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// An upload to a server that stops taking its body, or gives no answer once it has it all:
/// the engine's own check ends it after the entry's `timeout`, in syncr's words, with the
/// code scripts know (`timed_out`), retried as a timeout is. curl's low-speed limit said
/// "Operation too slow. Less than 1 bytes/sec transferred the last 2 seconds", seconds later.
@Suite("UploadStallTests", .timeLimit(.minutes(5)))
struct UploadStallTests {
    private func write(_ project: Project, _ yaml: String) throws {
        try yaml.write(to: project.folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
    }

    /// The server stops reading after the first MiB (the file is larger than the socket
    /// buffers of both ends, so the send blocks): the PUT is retried and goes whole.
    @Test func aPutTheServerStopsReadingIsRetriedAndSaidInSyncrsWords() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        try await server.behave(path: "/up/f.bin", FaultBehaviour(stallTimes: 1, stallBodyAfter: 1 << 20))
        let project = try Project()
        let size = 32 << 20
        try makeFile(path: project.file("f.bin"), size: size, seed: 81)
        try write(project, """
            version: 1
            defaults: { retries: 1, timeout: 2s }
            uploads:
              - { from: f.bin, to: "\(server.url("/up/f.bin"))", method: put }
            """)
        let result = try await project.run(["apply", "--progress", "plain"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try await server.uploads()["up/f.bin"] == size)
        #expect(result.stderr.contains("the server took no data for 2 s (timeout: 2s in the manifest) while sending "),
                "\(result.stderr)")
        #expect(result.stderr.contains("f.bin to \(server.url("/up/f.bin"))"), "\(result.stderr)")
        #expect(!result.stderr.contains("Operation too slow"), "\(result.stderr)")
    }

    /// The server reads the body whole and never answers: a PUT is retried until its retries
    /// are used up; a POST, which the server may have acted on, is not sent again.
    @Test func noAnswerAfterTheBodyIsSaidAsSuchAndRetriedAsATimeout() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let server = try await FaultServer.start(root: www.url)
        defer { server.stop() }
        for path in ["/up/put.bin", "/up/post"] {
            try await server.behave(path: path, FaultBehaviour(stallAnswer: true))
        }
        let project = try Project()
        try makeFile(path: project.file("f.bin"), size: 200_000, seed: 82)
        try write(project, """
            version: 1
            defaults: { retries: 1, timeout: 2s }
            uploads:
              - { from: f.bin, to: "\(server.url("/up/put.bin"))", method: put }
              - { from: f.bin, to: "\(server.url("/up/post"))", method: post }
            """)
        let result = try await project.run(["apply", "--json"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        let all = items(try jsonObject(result.stdout))
        try #require(all.count == 2, "\(result.stdout)")
        for item in all {
            #expect(item["status"] as? String == "failed", "\(item)")
            #expect(item["error_code"] as? String == "timed_out", "\(item)")
        }
        let put = all[0]["error"] as? String ?? ""
        #expect(put.hasPrefix("no answer for 2 s (timeout: 2s in the manifest) after sending "), "\(put)")
        #expect(put.hasSuffix("f.bin to \(server.url("/up/put.bin")) (gave up after 1 retry)"), "\(put)")
        let post = all[1]["error"] as? String ?? ""
        #expect(post.contains("f.bin to \(server.url("/up/post")) (not retried: the POST may have reached the server"), "\(post)")
        let stats = try await server.stats()
        #expect(stats["/up/put.bin"].puts == 2 && stats["/up/post"].posts == 1)
    }
}
