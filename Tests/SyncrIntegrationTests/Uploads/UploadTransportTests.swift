#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrHTTP
import Testing

/// The HTTP layer's uploads, driven through `TransferEngine` directly, against real servers on
/// 127.0.0.1: nginx's WebDAV PUT, the fault server (which stores and parses what it receives,
/// and misbehaves on demand) and PyPI's `uploadserver` (a real multipart consumer, cgi-based).
@Suite("UploadTransportTests", .timeLimit(.minutes(5)))
struct UploadTransportTests {
    /// Runs `body` with a fresh engine (so no connection is shared between tests) and shuts it down.
    func withEngine<T>(_ body: (TransferEngine) async throws -> T) async rethrows -> T {
        let engine = TransferEngine()
        defer { engine.shutdown() }
        return try await body(engine)
    }

    /// Sends `body` to `url` with its usual method (PUT for a file, POST for a form).
    func upload(_ engine: TransferEngine, _ body: RequestBody, to url: String,
                sink: BodyPrefixSink = BodyPrefixSink()) async -> TransferOutcome {
        await engine.attempt(.upload(body, url: url, displayURL: url), sink: sink)
    }

    /// The response of a successful outcome, or a recorded issue.
    func response(_ outcome: TransferOutcome, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPResponse {
        switch outcome.result {
        case .success(let response): return response
        case .failure(let error):
            Issue.record("expected an answer, got \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// A form with two text fields and two files (one above curl's 1 MiB `Expect` threshold).
    func makeForm(in dir: TemporaryDirectory) throws -> (MultipartForm, csv: URL, png: URL) {
        let csv = try makeFile(path: dir.appending("report.csv"), size: 300_000, seed: 11)
        let png = try makeFile(path: dir.appending("photo.png"), size: 1_500_000, seed: 12)
        let form = MultipartForm(parts: [
            .field(name: "title", value: "Quarterly ümlaut report"),
            .field(name: "empty", value: ""),
            try .file(name: "data", path: csv.path),
            try .file(name: "image", path: png.path, filename: "photo.png"),
        ])
        return (form, csv, png)
    }

    // MARK: nginx

    @Test func putTwentyMiBToNginxArrivesWholeWithContentLength() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let source = try makeFile(path: www.appending("x.bin"), size: 20 << 20, seed: 3)
        // nginx takes chunked PUTs too, so make it refuse any upload without Content-Length:
        // a 201 then proves the request carried one.
        let nginx = try await Nginx.start(root: www.url, options: .init(extraServerDirectives: """
                    if ($http_transfer_encoding) { return 411; }
                    set $syncr_length "$request_method:$http_content_length";
                    if ($syncr_length = "PUT:") { return 411; }
            """))
        defer { nginx.stop() }

        // The guard itself works: curl sending chunked is refused.
        let chunked = try await runProcess(executable: "/usr/bin/curl", arguments: [
            "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked",
            "-T", source.path, nginx.url("/upload/chunked.bin")])
        #expect(chunked.stdout == "411")

        let outcome = await withEngine { await upload($0, .file(path: source.path), to: nginx.url("/upload/x.bin")) }
        let answer = try response(outcome)
        #expect(answer.head.status == 201, "\(answer.errorBody)")
        #expect(answer.uploadedBytes == 20 << 20)
        let stored = nginx.uploadDirectory.appendingPathComponent("x.bin")
        #expect(try await sha256(file: stored) == (try await sha256(file: source)))
        let log = try await nginx.accessLog(atLeast: 2).to("/upload/x.bin")
        #expect(log.map(\.method) == ["PUT"])
        #expect(log.map(\.status) == [201])
    }

    // MARK: fault server

    @Test func putToFaultServerCarriesContentLengthNotChunked() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let source = try makeFile(path: dir.appending("a.bin"), size: 2_000_001, seed: 4)
        let answer = try response(await withEngine { await upload($0, .file(path: source.path), to: server.url("/dir/a.bin")) })
        #expect(answer.head.status == 201)
        let stats = try await server.stats()["/dir/a.bin"]
        #expect(stats.puts == 1)
        #expect(stats.contentLengths == [2_000_001])
        #expect(stats.chunked == 0)
        #expect(stats.bytesReceived == 2_000_001)
        #expect(try await sha256(file: server.uploadDirectory.appendingPathComponent("dir/a.bin"))
                == (try await sha256(file: source)))
    }

    @Test func postMultipartFormArrivesByteIdenticalAndWellFormed() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let (form, csv, png) = try makeForm(in: dir)
        let sink = BodyPrefixSink()
        let answer = try response(await withEngine { await upload($0, .multipart(form), to: server.url("/forms/new"), sink: sink) })
        #expect(answer.head.status == 201)
        #expect(answer.uploadedBytes == form.length)
        #expect(sink.text.contains("\"photo.png\""), "the server's receipt: \(sink.text)")

        let stats = try await server.stats()["/forms/new"]
        #expect(stats.posts == 1)
        #expect(stats.contentLengths == [Int(form.length)])
        #expect(stats.chunked == 0)

        // The fault server's own strict parser.
        let summary = try server.postSummary(path: "/forms/new")
        #expect(summary.length == Int(form.length))
        #expect(summary.fields == [["title", "Quarterly ümlaut report"], ["empty", ""]])
        #expect(summary.files.map(\.name) == ["data", "image"])
        #expect(summary.files.map(\.filename) == ["report.csv", "photo.png"])
        #expect(summary.files.map(\.contentType) == ["text/csv", "image/png"])
        let stored = summary.files.map { server.uploadDirectory.appendingPathComponent($0.saved) }
        #expect(try await sha256(file: stored[0]) == (try await sha256(file: csv)))
        #expect(try await sha256(file: stored[1]) == (try await sha256(file: png)))

        // An independent parser: Python's email package reads the raw body as a MIME message.
        let raw = server.uploadDirectory.appendingPathComponent(summary.body)
        let check = try await runProcess(executable: "python3", arguments: ["-c", """
            import email.parser, email.policy, hashlib, json, sys
            raw = open(sys.argv[1], "rb").read()
            head = ("Content-Type: " + sys.argv[2] + "\\r\\nMIME-Version: 1.0\\r\\n\\r\\n").encode()
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
            parts = [{"name": p.get_param("name", header="content-disposition"),
                      "filename": p.get_filename(),
                      "sha256": hashlib.sha256(p.get_payload(decode=True)).hexdigest(),
                      "defects": [str(d) for d in p.defects]} for p in msg.iter_parts()]
            print(json.dumps({"multipart": msg.is_multipart(), "defects": [str(d) for d in msg.defects],
                              "parts": parts}))
            """, raw.path, form.contentType])
        #expect(check.exitCode == 0, "\(check.stderr)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: check.stdoutData) as? [String: Any])
        #expect(parsed["multipart"] as? Bool == true)
        #expect((parsed["defects"] as? [String])?.isEmpty == true, "\(parsed)")
        let parts = try #require(parsed["parts"] as? [[String: Any]])
        #expect(parts.compactMap { $0["name"] as? String } == ["title", "empty", "data", "image"])
        #expect(parts.map { $0["filename"] as? String } == [nil, nil, "report.csv", "photo.png"])
        #expect(parts.allSatisfy { ($0["defects"] as? [String])?.isEmpty == true })
        let digests = parts.compactMap { $0["sha256"] as? String }
        #expect(try await digests[0] == sha256Hex(Array("Quarterly ümlaut report".utf8)))
        #expect(try await digests[1] == sha256Hex([]))
        #expect(digests[2] == (try await sha256(file: csv)))
        #expect(digests[3] == (try await sha256(file: png)))
    }

    /// SHA-256 of bytes, via a file and `sha256(file:)`.
    func sha256Hex(_ bytes: [UInt8]) async throws -> String {
        let dir = try TemporaryDirectory(prefix: "digest")
        let file = dir.appending("bytes")
        try Data(bytes).write(to: file)
        return try await sha256(file: file)
    }

    @Test func rejectionsComeBackAsStatusesWithTheirText() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let big = try makeFile(path: dir.appending("big.bin"), size: 3 << 20, seed: 6)
        let small = try makeFile(path: dir.appending("small.txt"), size: 1000, seed: 7)
        try await server.behave(path: "/too-large", FaultBehaviour(status: 413))
        try await server.behave(path: "/busy", FaultBehaviour(status: 503, retryAfter: "7", statusTimes: 1))
        try await withEngine { engine in
            // 3 MiB goes with `Expect: 100-continue`: the 413 comes instead of 100 Continue,
            // and the body is not sent.
            let refused = try response(await upload(engine, .file(path: big.path), to: server.url("/too-large")))
            #expect(refused.head.status == 413)
            #expect(refused.errorBody == "413 injected by faultserver")
            #expect(refused.uploadedBytes < 3 << 20)
            guard case .status(_, 413, _, let text, _, _)? = refused.statusError(url: "/too-large") else {
                Issue.record("expected a status error"); return
            }
            #expect(text == "413 injected by faultserver")

            // A small form is sent whole, then answered 503 with Retry-After; the next succeeds.
            let form = MultipartForm(parts: [try .file(name: "f", path: small.path)])
            let busy = try response(await upload(engine, .multipart(form), to: server.url("/busy")))
            #expect(busy.head.status == 503)
            #expect(busy.errorBody == "503 injected by faultserver")
            guard case .status(_, 503, let retryAfter, _, _, _)? = busy.statusError(url: "/busy") else {
                Issue.record("expected a status error"); return
            }
            #expect(retryAfter == .seconds(7))
            let again = try response(await upload(engine, .multipart(form), to: server.url("/busy")))
            #expect(again.head.status == 201)
        }
        let stats = try await server.stats()
        #expect(stats["/too-large"].bytesReceived == 0)
        #expect(stats["/busy"].statuses == [503, 201])
    }

    @Test(arguments: ["PUT", "POST"])
    func connectionDroppedMidBodyIsAConnectionFailureAfterSending(method: String) async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let (form, _, png) = try makeForm(in: dir)
        try await server.behave(path: "/cut", FaultBehaviour(dropBodyAfter: 100_000))
        let body: RequestBody = method == "PUT" ? .file(path: png.path) : .multipart(form)
        let outcome = await withEngine { await upload($0, body, to: server.url("/cut")) }
        guard case .failure(.connection(let url, _, let message, _)) = outcome.result else {
            Issue.record("expected a connection failure, got \(outcome.result)"); return
        }
        #expect(url == server.url("/cut"))
        #expect(!message.isEmpty)
        #expect(outcome.requestSent)
        let stats = try await server.stats()["/cut"]
        #expect(stats.bytesReceived == 100_000)
        // curl did not quietly send it again.
        #expect(stats.puts + stats.posts == 1)
        #expect(try await server.uploads().isEmpty, "a cut-off upload is never stored")
    }

    /// A server that answers 200 before it read the body has not taken the upload: it must not
    /// pass for sent (it was recorded as sent, and every later plan skipped it).
    @Test(arguments: ["PUT", "POST"])
    func aSuccessAnsweredBeforeTheBodyIsAFailure(method: String) async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let big = try makeFile(path: dir.appending("big.bin"), size: 24 << 20, seed: 13)
        try await server.behave(path: "/early", FaultBehaviour(answerBeforeBody: 200))
        let body: RequestBody = method == "PUT" ? .file(path: big.path)
            : .multipart(MultipartForm(parts: [try .file(name: "f", path: big.path)]))
        let outcome = await withEngine { await upload($0, body, to: server.url("/early")) }
        switch outcome.result {
        case .failure(.invalidResponse(_, let message)):
            #expect(message.contains("so it cannot have taken the upload"), "\(message)")
        case .failure(.connection):
            break  // the reset reached curl before the answer: a failure too
        default:
            Issue.record("expected a failure, got \(outcome.result)")
        }
        #expect(try await server.uploads().isEmpty)
    }

    /// An object store's key is a name: `a/../b` goes to the server as written (it went as `b`,
    /// after the signature covered `a/../b`), where a plain URL's dot segments are resolved.
    @Test func aPathAsIsKeepsItsDotSegments() async throws {
        let dir = try TemporaryDirectory(prefix: "dots")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        await withEngine { engine in
            var request = HTTPRequest(method: .head, url: server.url("/keys/a/../b.txt"), displayURL: "k")
            request.pathAsIs = true
            _ = await engine.attempt(request, sink: BodyPrefixSink())
            _ = await engine.attempt(HTTPRequest(method: .head, url: server.url("/plain/a/../b.txt"), displayURL: "p"),
                                     sink: BodyPrefixSink())
        }
        let stats = try await server.stats()
        #expect(stats["/keys/a/../b.txt"].requests == 1)
        #expect(stats["/plain/b.txt"].requests == 1)
    }

    @Test(arguments: ["PUT", "POST"])
    func refusedConnectionFailsBeforeSending(method: String) async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let file = try makeFile(path: dir.appending("a.txt"), size: 10, seed: 1)
        let port = try freePort() // nothing listens there
        let body: RequestBody = method == "PUT" ? .file(path: file.path)
            : .multipart(MultipartForm(parts: [try .file(name: "f", path: file.path)]))
        let outcome = await withEngine { await upload($0, body, to: "http://127.0.0.1:\(port)/x") }
        guard case .failure(.connection(_, let code, _, _)) = outcome.result else {
            Issue.record("expected a connection failure, got \(outcome.result)"); return
        }
        #expect(code == 7) // CURLE_COULDNT_CONNECT
        #expect(!outcome.requestSent)
        // So a POST may be retried, which the rule allows only now.
        #expect(RetryPolicy(maxRetries: 1).isRetryable(.connection(url: "", code: code, message: ""),
                                                        method: .post, requestSent: outcome.requestSent))
    }

    @Test func redirectedPutRewindsAndSendsTheBodyAgain() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let source = try makeFile(path: dir.appending("a.bin"), size: 1_200_000, seed: 8)
        try await server.behave(path: "/old", FaultBehaviour(redirectTo: "/new", redirectStatus: 307))
        let answer = try response(await withEngine { await upload($0, .file(path: source.path), to: server.url("/old")) })
        #expect(answer.head.status == 201)
        #expect(answer.head.effectiveURL == server.url("/new"))
        let stats = try await server.stats()
        #expect(stats["/old"].bytesReceived == 1_200_000)
        #expect(stats["/new"].bytesReceived == 1_200_000)
        #expect(try await sha256(file: server.uploadDirectory.appendingPathComponent("new")) == (try await sha256(file: source)))
    }

    @Test func fileGrowingDuringThePutFailsLocallyAndNothingIsStored() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        // Far more than loopback socket buffers hold, so most of it is still unread when the
        // server stalls.
        let source = try makeFile(path: dir.appending("growing.log"), size: 64 << 20, seed: 9)
        try await server.behave(path: "/growing.log", FaultBehaviour(stallBodyAfter: 1 << 20))
        let engine = TransferEngine()
        defer { engine.shutdown() }
        // The stall lasts as long as this test takes to look, which in a full run under a
        // sanitizer has been over curl's 30 s low-speed limit: the limit is not what is tested.
        var request = HTTPRequest.upload(.file(path: source.path), url: server.url("/growing.log"),
                                         displayURL: server.url("/growing.log"))
        request.lowSpeedTimeSeconds = 600
        async let outcome = engine.attempt(request, sink: BodyPrefixSink())
        let stalled = try await poll(timeout: .seconds(90)) { try await server.stats()["/growing.log"].bytesReceived >= 1 << 20 }
        #expect(stalled)
        let handle = try FileHandle(forWritingTo: source)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("one more line\n".utf8))
        try handle.close()
        try await server.release(path: "/growing.log")
        let result = await outcome
        guard case .failure(.changedWhileSending(let path, let change)) = result.result else {
            Issue.record("expected changedWhileSending, got \(result.result)"); return
        }
        #expect(path == source.path)
        #expect(change?.contains("\(64 << 20) bytes when the upload started") == true, "\(change ?? "")")
        #expect(result.requestSent)
        #expect(try await server.uploads().isEmpty, "the server never got a complete body")
        // Stopped at the next buffer read after the change, not at the file's end: what the
        // server got is what the sockets held then, far from the 64 MiB it got before.
        let received = try await server.stats()["/growing.log"].bytesReceived
        #expect(received < 32 << 20, "\(received) bytes sent of a file that changed after 1 MiB")
    }

    @Test func missingFileFailsLocallyWithoutConnecting() async throws {
        let outcome = await withEngine { await upload($0, .file(path: "/nonexistent/file.bin"), to: "http://127.0.0.1:9/x") }
        guard case .failure(.local(let path, let code, _)) = outcome.result else {
            Issue.record("expected a local failure, got \(outcome.result)"); return
        }
        #expect(path == "/nonexistent/file.bin")
        #expect(code == ENOENT)
        #expect(!outcome.requestSent)
    }

    /// The fault server's upload side checked with `/usr/bin/curl` (its own multipart encoder),
    /// so that a failure above points at syncr rather than at the harness.
    @Test func faultServerUploadSideAgreesWithCurl() async throws {
        let dir = try TemporaryDirectory(prefix: "upload")
        let server = try await FaultServer.start(root: try dir.makeDirectory("root"))
        defer { server.stop() }
        let (_, csv, png) = try makeForm(in: dir)
        func curl(_ arguments: [String]) async throws -> String {
            try await runProcess(executable: "/usr/bin/curl", arguments: [
                "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}"] + arguments).stdout
        }
        #expect(try await curl(["-F", "title=hi", "-F", "a=@\(csv.path);type=text/csv", "-F", "b=@\(png.path);type=image/png",
                                server.url("/curl")]) == "201")
        let summary = try server.postSummary(path: "/curl")
        #expect(summary.fields == [["title", "hi"]])
        #expect(summary.files.map(\.filename) == ["report.csv", "photo.png"])
        #expect(summary.files.map(\.contentType) == ["text/csv", "image/png"])
        #expect(try await sha256(file: server.uploadDirectory.appendingPathComponent(summary.files[1].saved))
                == (try await sha256(file: png)))
        #expect(try await curl(["-T", csv.path, "-H", "Transfer-Encoding: chunked", server.url("/chunked")]) == "411")
        #expect(try await curl(["-T", csv.path, server.url("/put")]) == "201")
        #expect(try await curl(["-T", csv.path, server.url("/put")]) == "200")
        let stats = try await server.stats()
        #expect(stats["/chunked"].chunked == 1)
        #expect(stats["/put"].contentLengths == [300_000, 300_000])
        #expect(try await server.uploads()["put"] == 300_000)
    }

    // MARK: uploadserver (PyPI)

    /// The real multipart receiver is never skipped: scripts/setup installs it.
    @Test func postToUploadserverLandsByteIdentical() async throws {
        try #require(Uploadserver.installed, "the uploadserver package is missing: run scripts/setup (it installs it from PyPI)")
        let dir = try TemporaryDirectory(prefix: "uploadserver")
        let served = try dir.makeDirectory("served")
        let (_, csv, png) = try makeForm(in: dir)
        let (server, port) = try await Uploadserver.start(directory: served)
        defer { server.terminate(grace: .seconds(2)) }

        let form = MultipartForm(parts: [
            .field(name: "note", value: "ignored by uploadserver"),
            try .file(name: "files", path: csv.path),
            try .file(name: "files", path: png.path, filename: "photo.png"),
        ])
        let answer = try response(await withEngine { await upload($0, .multipart(form), to: "http://127.0.0.1:\(port)/upload") })
        #expect(answer.head.status == 204, "\(answer.errorBody)")
        #expect(try await sha256(file: served.appendingPathComponent("report.csv")) == (try await sha256(file: csv)))
        #expect(try await sha256(file: served.appendingPathComponent("photo.png")) == (try await sha256(file: png)))
    }
}
