#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A file that changes while `syncr apply` uploads it, as its user sees it: the upload stops
/// soon after the change instead of sending the rest of the file for nothing.
@Suite("UploadChangedTests", .timeLimit(.minutes(5)))
struct UploadChangedTests {
    /// The file is rewritten in place (same size: only its time tells) once its first MiB
    /// went. The body's reader looked only at the file's end, so all 64 MiB went out before
    /// the upload failed; it now looks with every buffer and stops a few buffers later.
    @Test func aFileRewrittenDuringItsPutStopsTheUploadSoon() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        // The server stops reading after 1 MiB until released, so the change surely comes
        // after the first bytes left and long before the last.
        try await server.behave(path: "/app.bin", FaultBehaviour(stallBodyAfter: 1 << 20))
        let project = try Project()
        let size = 64 << 20
        try makeFile(path: project.file("app.bin"), size: size, seed: 37)
        try "version: 1\ndefaults: { retries: 3, timeout: 10m }\nuploads:\n  - { from: app.bin, to: \"\(server.url("/app.bin"))\", method: put }\n"
            .write(to: project.file("syncr.yml"), atomically: true, encoding: .utf8)
        let run = try BackgroundSyncr(project, ["apply", "--json"])
        let stalled = try await poll(timeout: .seconds(90)) {
            try await server.stats()["/app.bin"].bytesReceived >= 1 << 20 || !run.child.isRunning
        }
        try #require(stalled && run.child.isRunning, "\(run.stderr)")
        let handle = try FileHandle(forWritingTo: project.file("app.bin"))
        try handle.write(contentsOf: Data("a new first line\n".utf8))
        try handle.close()
        try await server.release(path: "/app.bin")
        #expect(await run.finish() == 1, "\(run.stderr)")

        let item = try #require(items(try jsonObject(run.stdout)).first)
        #expect(item["error_code"] as? String == "changed_while_sending", "\(item)")
        #expect((item["error"] as? String)?.contains("app.bin: changed while it was being uploaded (it was modified)") == true,
                "\(item)")
        let transferred = try #require(item["transferred"] as? Int)
        let received = try await server.stats()["/app.bin"].bytesReceived
        #expect(transferred < size / 2 && received < size / 2,
                "\(transferred) bytes sent, \(received) received of a \(size)-byte file that changed after 1 MiB")
        #expect(try await server.uploads().isEmpty, "the server never got a complete body")
        #expect(run.stderr.contains("of it by uploads that did not finish)"), "\(run.stderr)")
    }
}
