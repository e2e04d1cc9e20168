import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP
import SyncrManifest

/// A 200 without `Content-Length` ends when the server closes the connection, so a connection
/// cut short looks like the whole file. Where the plan's question gave the size of that very
/// version, a shorter body is a failure, never a file in place.
@Suite(.timeLimit(.minutes(5)))
struct UnsizedAnswerTests {
    private static let first = Resource(bytes: Resource.pattern(4096), etag: "\"v1\"")
    private static let second = Resource(bytes: Resource.pattern(4096, seed: 9), etag: "\"v2\"")

    /// The scripted server: HEAD as `resource` says; GET a 200 with its validators but no
    /// length, and only the first `sent` bytes.
    private static func unsized(_ resource: Resource, sent: Int, etag: String? = nil) -> ScriptedTransport {
        ScriptedTransport { request, _ in
            if request.method == .head { return resource.answer(request) }
            return Reply(status: 200, headers: [("ETag", etag ?? resource.etag ?? "")], body: Array(resource.bytes.prefix(sent)))
        }
    }

    /// After a first download, the server has a new version and cuts its body short: the entry
    /// fails (retried first), and the first version stays in place.
    @Test func aBodyShorterThanThePlannedSizeIsNotPutInPlace() async throws {
        let project = try ScriptedProject(retries: 1)
        let download = project.download("f.bin")
        let whole = ScriptedTransport { request, _ in Self.first.answer(request) }
        #expect(await project.apply(download, over: whole).status == .ok)

        let cut = Self.unsized(Self.second, sent: 2048)
        let result = await project.apply(download, over: cut)
        #expect(result.status == .failed)
        #expect(result.errorText?.contains("the connection closed after 2048 of 4096 bytes") == true, "\(result.errorText ?? "")")
        #expect(cut.requests.filter { $0.method != .head }.count >= 2, "retried")
        #expect(FileManager.default.contents(atPath: project.root + "/f.bin") == Data(Self.first.bytes))
    }

    /// The whole body without a length is the file; so is a body of another version than the
    /// question's (its size is not known), as before.
    @Test func aWholeBodyOrAnotherVersionIsTaken() async throws {
        let project = try ScriptedProject(retries: 1)
        let download = project.download("f.bin")
        #expect(await project.apply(download, over: ScriptedTransport { r, _ in Self.first.answer(r) }).status == .ok)

        let whole = await project.apply(download, over: Self.unsized(Self.second, sent: 4096))
        #expect(whole.status == .ok, "\(whole.errorText ?? "")")
        #expect(FileManager.default.contents(atPath: project.root + "/f.bin") == Data(Self.second.bytes))
    }
}
