import Foundation
import Testing

/// S3's answers that mean "try again" (503 SlowDown, 500 InternalError, each with its XML error
/// document), played by the fault server as an anonymous path-style store: retried with
/// backoff as for HTTP, and worded with S3's code, bucket and key when they do not stop.
@Suite(.timeLimit(.minutes(5))) struct S3RetryTests {
    static let slowDown = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
        + "<Message>Please reduce your request rate.</Message></Error>"
    static let internalError = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InternalError</Code>"
        + "<Message>We encountered an internal error. Please try again.</Message></Error>"

    /// A store on the fault server: files under `bucket/`, reached as `s3://bucket/NAME`.
    static func serve() async throws -> (FaultServer, TemporaryDirectory) {
        let www = try TemporaryDirectory(prefix: "www-s3retry")
        try FileManager.default.createDirectory(atPath: www.appending("bucket").path, withIntermediateDirectories: true)
        _ = try makeFile(path: www.appending("bucket/a.bin"), size: 300_000, seed: 61)
        _ = try makeFile(path: www.appending("bucket/b.bin"), size: 200_000, seed: 62)
        return (try await FaultServer.start(root: www.url), www)
    }

    static func manifest(_ project: Project, _ server: FaultServer, retries: Int) throws {
        try project.writeManifest(
            defaults: "{ retries: \(retries), timeout: 10s, s3: { endpoint: \"\(server.url(""))\", anonymous: true, path_style: true } }",
            downloads: ["{ url: \"s3://bucket/a.bin\", to: out/a.bin }", "{ url: \"s3://bucket/b.bin\", to: out/b.bin }"])
    }

    @Test func slowDownAndInternalErrorAreRetried() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        try await server.behave(path: "/bucket/a.bin", FaultBehaviour(status: 503, retryAfter: "0", statusTimes: 2,
                                                                      statusOn: .get, statusBody: Self.slowDown))
        try await server.behave(path: "/bucket/b.bin", FaultBehaviour(status: 500, statusTimes: 1, statusOn: .get,
                                                                      statusBody: Self.internalError))
        let project = try Project()
        try Self.manifest(project, server, retries: 3)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("SlowDown"), "the retries say what the store answered: \(result.stderr)")
        #expect(result.stderr.contains("InternalError"), "\(result.stderr)")
        for name in ["a.bin", "b.bin"] {
            #expect(try await sha256(file: project.file("out/" + name)) == (try await sha256(file: www.appending("bucket/" + name))))
        }
        let stats = try await server.stats()
        #expect(stats.paths["/bucket/a.bin"]?.gets == 3, "two refusals, then the file")
        #expect(stats.paths["/bucket/b.bin"]?.gets == 2)
    }

    /// A store that keeps answering SlowDown: the entry fails once its retries are spent, with
    /// S3's code and message, the bucket and the key, and the run exits 1.
    @Test func slowDownThatNeverEndsFailsNamingIt() async throws {
        let (server, www) = try await Self.serve()
        defer { server.stop(); withExtendedLifetime(www) {} }
        try await server.behave(path: "/bucket/a.bin", FaultBehaviour(status: 503, retryAfter: "0", statusOn: .get,
                                                                      statusBody: Self.slowDown))
        let project = try Project()
        try Self.manifest(project, server, retries: 1)
        let result = try await project.run(["apply"])
        #expect(result.exitCode == 1, "\(result)")
        let failure = try #require(result.stderr.split(separator: "\n").first { $0.contains("FAILED out/a.bin") }, "\(result.stderr)")
        #expect(failure.contains("SlowDown") && failure.contains("Please reduce your request rate"), "\(failure)")
        #expect(failure.contains("bucket bucket") && failure.contains("key a.bin"), "\(failure)")
        #expect(try await server.stats().paths["/bucket/a.bin"]?.gets == 2, "the request and its one retry")
        #expect(project.exists("out/b.bin"), "the other entry still completes")
    }
}
