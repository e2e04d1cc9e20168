import Foundation
import Testing

/// Checks the test servers themselves, through `/usr/bin/curl`, so that a failing
/// integration test points at syncr and not at its harness.
@Suite("ServerSelfTests", .timeLimit(.minutes(5)))
struct ServerSelfTests {
    /// What curl reported for one transfer.
    struct CurlResult {
        var exitCode: Int32
        var status: Int
        var headers: [String: String]
        var body: Data
        var stderr: String

        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// Fetches `url` with curl; `extra` are more curl arguments (-r, -H, -I, ...).
    func curl(_ url: String, _ extra: [String] = [], in dir: TemporaryDirectory) async throws -> CurlResult {
        let headerFile = dir.appending("headers-\(UUID().uuidString)")
        let bodyFile = dir.appending("body-\(UUID().uuidString)")
        let result = try await runProcess(
            executable: "/usr/bin/curl",
            arguments: ["-sS", "--noproxy", "*", "--max-time", "60", "-D", headerFile.path,
                        "-o", bodyFile.path, "-w", "%{http_code}"] + extra + [url])
        var headers: [String: String] = [:]
        let headerText = (try? String(contentsOf: headerFile, encoding: .utf8)) ?? ""
        // With redirects not followed there is one header block; keep the last anyway.
        for line in headerText.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("HTTP/") { headers = [:]; continue }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return CurlResult(
            exitCode: result.exitCode, status: Int(result.stdout) ?? 0, headers: headers,
            body: FileManager.default.contents(atPath: bodyFile.path) ?? Data(),
            stderr: result.stderr)
    }

    /// A root folder with `name` of `size` deterministic bytes; returns the folder and bytes.
    func fixture(_ dir: TemporaryDirectory, name: String = "big.bin", size: Int = 300_000,
                 seed: UInt64 = 7) throws -> (root: URL, content: Data) {
        let root = try dir.makeDirectory("root")
        let file = try makeFile(path: root.appendingPathComponent(name), size: size, seed: seed)
        return (root, try Data(contentsOf: file))
    }

    // MARK: - helpers

    @Test func makeFileIsDeterministicAndPrefixStable() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let a = try makeFile(path: dir.appending("a"), size: 3 << 20, seed: 1)
        let b = try makeFile(path: dir.appending("b"), size: 3 << 20, seed: 1)
        let c = try makeFile(path: dir.appending("c"), size: 3 << 20, seed: 2)
        let short = try makeFile(path: dir.appending("short"), size: 1_500_000, seed: 1)
        #expect(try await sha256(file: a) == sha256(file: b))
        #expect(try await sha256(file: a) != sha256(file: c))
        let whole = try Data(contentsOf: a)
        #expect(whole.count == 3 << 20)
        #expect(try Data(contentsOf: short) == whole.prefix(1_500_000))
        // Blocks differ from each other, so misplaced data is always detected.
        #expect(whole[0..<(1 << 20)] != whole[(1 << 20)..<(2 << 20)])
    }

    @Test func runProcessReadsBothPipesWithoutDeadlock() async throws {
        // 1 MiB to each pipe: far more than a pipe buffer holds.
        let result = try await runProcess(
            executable: "/bin/sh",
            arguments: ["-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; exit 3"])
        #expect(result.exitCode == 3)
        #expect(result.stdoutData.count == 1 << 20)
        #expect(result.stderrData.count == 1 << 20)
        #expect(!result.timedOut)
        let echoed = try await runProcess(executable: "cat", stdin: Data("hi".utf8))
        #expect(echoed.stdout == "hi")
        let env = try await runProcess(executable: "/bin/sh", arguments: ["-c", "echo $SYNCR_X; pwd"],
                                       environment: ["SYNCR_X": "y"], cwd: URL(fileURLWithPath: "/"))
        #expect(env.stdout == "y\n/\n")
    }

    @Test func runProcessEndsAProcessThatOutlivesItsTimeout() async throws {
        let result = try await runProcess(executable: "sleep", arguments: ["600"],
                                          timeout: .milliseconds(200))
        #expect(result.timedOut)
        #expect(result.exitCode == 128 + SIGTERM)
    }

    @Test func freePortsAreUsable() throws {
        let port = try freePort()
        #expect(port > 0)
        #expect(!isAccepting(port: port))
    }

    // MARK: - nginx

    @Test func nginxServesFilesWithValidatorsRangesAndLog() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let nginx = try await Nginx.start(root: root)
        defer { nginx.stop() }

        let full = try await curl(nginx.url("/big.bin"), in: dir)
        #expect(full.exitCode == 0)
        #expect(full.status == 200)
        #expect(full.body == content)
        let etag = try #require(full.header("ETag"))
        #expect(etag.hasPrefix("\""))
        #expect(full.header("Last-Modified") != nil)
        #expect(full.header("Accept-Ranges") == "bytes")

        let part = try await curl(nginx.url("/big.bin"), ["-r", "100-199", "-H", "If-Range: \(etag)"], in: dir)
        #expect(part.status == 206)
        #expect(part.header("Content-Range") == "bytes 100-199/\(content.count)")
        #expect(part.body == content[100..<200])

        let log = try await nginx.accessLog(atLeast: 2).to("/big.bin")
        #expect(log.count == 2)
        #expect(log.map(\.status) == [200, 206])
        #expect(log.map(\.bodyBytesSent) == [content.count, 100])
        #expect(log.totalBodyBytes == content.count + 100)
        #expect(log[1].range == "bytes=100-199")
        #expect(log[1].ifRange == etag)
        #expect(log[0].range == nil)
        #expect(log.allSatisfy { $0.method == "GET" && $0.completed })
    }

    @Test func nginxAcceptsWebDAVUploadsAndServesSlowLocation() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 20_000)
        let nginx = try await Nginx.start(root: root, options: .init(slowRate: 1_000_000))
        defer { nginx.stop() }

        let upload = dir.appending("up.bin")
        try content.write(to: upload)
        let put = try await curl(nginx.url("/upload/a/b/up.bin"), ["-T", upload.path], in: dir)
        #expect(put.status == 201)
        #expect(try Data(contentsOf: nginx.uploadDirectory.appendingPathComponent("a/b/up.bin")) == content)

        let slow = try await curl(nginx.url("/slow/big.bin"), in: dir)
        #expect(slow.status == 200)
        #expect(slow.body == content)
    }

    @Test func twoNginxInstancesRunSideBySide() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, _) = try fixture(dir, size: 10)
        let a = try await Nginx.start(root: root)
        let b = try await Nginx.start(root: root)
        defer { a.stop(); b.stop() }
        #expect(a.port != b.port)
        #expect(try await curl(a.url("/big.bin"), in: dir).status == 200)
        #expect(try await curl(b.url("/big.bin"), in: dir).status == 200)
    }

    @Test func nginxOffersHTTP2OverTLSAndLogsTheProtocol() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 20_000)
        let certificates = try await TestCertificates.make()
        let nginx = try await Nginx.start(root: root, options: .init(tls: certificates.server, http2: true))
        defer { nginx.stop() }
        let trust = ["--cacert", certificates.caCertificate.path]
        #expect(try await curl(nginx.url("/big.bin"), trust + ["--http2"], in: dir).body == content)
        #expect(try await curl(nginx.url("/big.bin"), trust + ["--http1.1"], in: dir).body == content)
        let log = try await nginx.accessLog(atLeast: 2)
        #expect(log.map(\.serverProtocol) == ["HTTP/2.0", "HTTP/1.1"])
        #expect(log[0].connection != log[1].connection)
    }

    /// The proxy passes TLS through untouched and counts connections: one after another, then
    /// two at once (throttled, so both are still open together).
    @Test func throttleProxyForwardsTLSAndCountsConnections() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 200_000)
        let certificates = try await TestCertificates.make()
        let nginx = try await Nginx.start(root: root, options: .init(tls: certificates.server, http2: true))
        defer { nginx.stop() }
        let proxy = try await ThrottleProxy.start(targetPort: nginx.port, rate: 100_000, latencyMilliseconds: 20)
        defer { proxy.stop() }
        let trust = ["--cacert", certificates.caCertificate.path]
        let url = proxy.url(nginx.url("/big.bin"))
        #expect(url.hasPrefix("https://127.0.0.1:\(proxy.port)/"))
        #expect(try await curl(url, trust, in: dir).body == content)
        #expect(try await curl(url, trust + ["-r", "0-99"], in: dir).body == content.prefix(100))
        // curl exits as soon as it has its bytes; the proxy sees each close a moment later.
        _ = try await poll { try proxy.stats().open == 0 }
        let first = try proxy.stats()
        #expect(first == .init(accepted: 2, open: 0, maxOpen: 1), "\(first)")

        let both = try await runProcess(executable: "/usr/bin/curl", arguments: [
            "-sS", "--noproxy", "*", "--max-time", "60", "--parallel", "--parallel-immediate", "--http1.1",
            "--cacert", certificates.caCertificate.path,
            "-o", dir.appending("one").path, url, "-o", dir.appending("two").path, url])
        #expect(both.exitCode == 0, "\(both.stderr)")
        #expect(FileManager.default.contents(atPath: dir.appending("one").path) == content)
        #expect(FileManager.default.contents(atPath: dir.appending("two").path) == content)
        _ = try await poll { try proxy.stats().open == 0 }
        let stats = try proxy.stats()
        #expect(stats.accepted == 4 && stats.maxOpen == 2, "\(stats)")
        let log = try await nginx.accessLog(atLeast: 4)
        #expect(Set(log.map(\.connection)).count == 4)
    }

    // MARK: - fault server: correct behaviour

    @Test func faultServerHonoursRangeAndIfRange() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        let url = server.url("/big.bin")
        let size = content.count

        let head = try await curl(url, ["-I"], in: dir)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "\(size)")
        #expect(head.header("Accept-Ranges") == "bytes")
        let etag = try #require(head.header("ETag"))
        #expect(etag.hasPrefix("\""))
        let lastModified = try #require(head.header("Last-Modified"))

        let full = try await curl(url, in: dir)
        #expect(full.body == content)

        let cases: [(String, Range<Int>)] = [
            ("bytes=100-199", 100..<200), ("bytes=1000-", 1000..<size),
            ("bytes=-10", (size - 10)..<size), ("bytes=0-0", 0..<1),
            ("bytes=\(size - 1)-\(size + 500)", (size - 1)..<size),
        ]
        for (range, expected) in cases {
            let part = try await curl(url, ["-H", "Range: \(range)"], in: dir)
            #expect(part.status == 206, "\(range)")
            #expect(part.header("Content-Range") ==
                    "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/\(size)", "\(range)")
            #expect(part.body == content[expected], "\(range)")
        }

        let unsatisfiable = try await curl(url, ["-H", "Range: bytes=\(size)-"], in: dir)
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.header("Content-Range") == "bytes */\(size)")

        let matching = try await curl(url, ["-r", "10-", "-H", "If-Range: \(etag)"], in: dir)
        #expect(matching.status == 206)
        #expect(matching.body == content[10...])
        let byDate = try await curl(url, ["-r", "10-", "-H", "If-Range: \(lastModified)"], in: dir)
        #expect(byDate.status == 206)
        let stale = try await curl(url, ["-r", "10-", "-H", "If-Range: \"stale\""], in: dir)
        #expect(stale.status == 200)
        #expect(stale.body == content)

        // New content, new ETag; the old ETag then gets the full new body.
        let replacement = try makeFile(path: dir.appending("new.bin"), size: size, seed: 99)
        try await server.put(path: "/big.bin", from: replacement)
        let changed = try await curl(url, ["-r", "10-", "-H", "If-Range: \(etag)"], in: dir)
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != etag)
        #expect(changed.body == (try Data(contentsOf: replacement)))

        let stats = try await server.stats()["/big.bin"]
        #expect(stats.heads == 1)
        #expect(stats.ranges.contains("bytes=100-199"))
        #expect(stats.ifRanges == [etag, lastModified, "\"stale\"", etag])
        #expect(stats.statuses.first == 200)
        #expect(try await curl(server.url("/missing"), in: dir).status == 404)
    }

    @Test func faultServerEtagChangesWhenFileIsRewrittenInPlace() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, _) = try fixture(dir, size: 5000)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        let before = try await curl(server.url("/big.bin"), ["-I"], in: dir).header("ETag")
        try makeFile(path: root.appendingPathComponent("big.bin"), size: 5000, seed: 8)
        let after = try await curl(server.url("/big.bin"), ["-I"], in: dir).header("ETag")
        #expect(before != nil && after != nil && before != after)
    }

    // MARK: - fault server: faults

    @Test func dropAfterCutsTheTransferShortForTheFirstGetsOnly() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        try await server.behave(path: "/big.bin", FaultBehaviour(dropAfter: 1000, dropTimes: 2))

        let first = try await curl(server.url("/big.bin"), in: dir)
        #expect(first.exitCode == 18)  // CURLE_PARTIAL_FILE
        #expect(first.body == content.prefix(1000))
        let second = try await curl(server.url("/big.bin"), ["-r", "5000-"], in: dir)
        #expect(second.exitCode != 0)
        #expect(second.body == content[5000..<6000])
        let third = try await curl(server.url("/big.bin"), in: dir)
        #expect(third.exitCode == 0)
        #expect(third.body == content)

        let stats = try await server.stats()["/big.bin"]
        #expect(stats.gets == 3)
        #expect(stats.bytesSent == 2000 + content.count)
        #expect(stats.ranges == ["bytes=5000-"])

        try await server.behave(path: "/big.bin", FaultBehaviour(dropAfter: 0, dropRST: true))
        let reset = try await curl(server.url("/big.bin"), in: dir)
        #expect(reset.exitCode != 0)
        #expect(reset.body.isEmpty)
    }

    @Test func statusWithRetryAfterForTheFirstRequests() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 1000)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        try await server.behave(path: "/big.bin",
                                FaultBehaviour(status: 503, retryAfter: "1", statusTimes: 2))
        let head = try await curl(server.url("/big.bin"), ["-I"], in: dir)
        #expect(head.status == 503)
        #expect(head.header("Retry-After") == "1")
        let get = try await curl(server.url("/big.bin"), in: dir)
        #expect(get.status == 503)
        #expect(String(decoding: get.body, as: UTF8.self).contains("503"))
        let ok = try await curl(server.url("/big.bin"), in: dir)
        #expect(ok.status == 200)
        #expect(ok.body == content)

        try await server.behave(path: "/big.bin",
                                FaultBehaviour(status: 429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT",
                                               statusOn: .get))
        #expect(try await curl(server.url("/big.bin"), ["-I"], in: dir).status == 200)
        let limited = try await curl(server.url("/big.bin"), in: dir)
        #expect(limited.status == 429)
        #expect(limited.header("Retry-After") == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(try await server.stats()["/big.bin"].statuses == [503, 503, 200, 200, 429])
    }

    @Test func headStatusAffectsOnlyHead() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 1000)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        try await server.behave(path: "/big.bin", FaultBehaviour(headStatus: 405))
        let head = try await curl(server.url("/big.bin"), ["-I"], in: dir)
        #expect(head.status == 405, "curl exited \(head.exitCode): \(head.stderr)")
        let probe = try await curl(server.url("/big.bin"), ["-r", "0-0"], in: dir)
        #expect(probe.status == 206, "curl exited \(probe.exitCode): \(probe.stderr)")
        #expect(probe.header("Content-Range") == "bytes 0-0/\(content.count)")
    }

    @Test func ignoreRangeAnswersFullBodyButAdvertisesRanges() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        try await server.behave(path: "/big.bin", FaultBehaviour(ignoreRange: true))
        #expect(try await curl(server.url("/big.bin"), ["-I"], in: dir).header("Accept-Ranges") == "bytes")
        let ranged = try await curl(server.url("/big.bin"), ["-r", "100-"], in: dir)
        #expect(ranged.status == 200)
        #expect(ranged.body == content)

        try await server.behave(path: "/big.bin", FaultBehaviour(noAcceptRanges: true))
        let head = try await curl(server.url("/big.bin"), ["-I"], in: dir)
        #expect(head.header("Accept-Ranges") == nil)
        #expect(try await curl(server.url("/big.bin"), ["-r", "100-"], in: dir).status == 200)
    }

    @Test func headerOmissionsAndWeakEtag() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        let url = server.url("/big.bin")

        try await server.behave(path: "/big.bin", FaultBehaviour(noLength: true))
        let chunked = try await curl(url, in: dir)
        #expect(chunked.header("Content-Length") == nil)
        #expect(chunked.header("Transfer-Encoding") == "chunked")
        #expect(chunked.body == content)
        #expect(try await curl(url, ["-I"], in: dir).header("Content-Length") == nil)

        try await server.behave(path: "/big.bin", FaultBehaviour(noValidators: true))
        let bare = try await curl(url, ["-I"], in: dir)
        #expect(bare.header("ETag") == nil && bare.header("Last-Modified") == nil)

        try await server.behave(path: "/big.bin", FaultBehaviour(weakEtag: true))
        let weak = try #require(try await curl(url, ["-I"], in: dir).header("ETag"))
        #expect(weak.hasPrefix("W/\""))
        // Weak tags never match If-Range (strong comparison): full body.
        #expect(try await curl(url, ["-r", "10-", "-H", "If-Range: \(weak)"], in: dir).status == 200)
    }

    @Test func wrongContentRangeIsOffByOne() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        try await server.behave(path: "/big.bin", FaultBehaviour(wrongContentRange: true))
        let part = try await curl(server.url("/big.bin"), ["-r", "100-199"], in: dir)
        #expect(part.status == 206)
        #expect(part.header("Content-Range") == "bytes 101-200/\(content.count)")
        #expect(part.body == content[101...200])
    }

    @Test func redirectStallAndRate() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 50_000)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }

        try await server.behave(path: "/old.bin", FaultBehaviour(redirectTo: "/big.bin"))
        let redirect = try await curl(server.url("/old.bin"), in: dir)
        #expect(redirect.status == 302)
        #expect(redirect.header("Location") == server.url("/big.bin"))
        #expect(try await curl(server.url("/old.bin"), ["-L"], in: dir).body == content)

        // A short stall, then the rest: the transfer completes.
        try await server.behave(path: "/big.bin",
                                FaultBehaviour(stallAfter: 1000, stallSeconds: 0.2, stallTimes: 1))
        #expect(try await curl(server.url("/big.bin"), in: dir).body == content)

        // A long stall: the client gives up after what it got; stop() still ends the server.
        try await server.behave(path: "/big.bin", FaultBehaviour(stallAfter: 1000, stallSeconds: 3600))
        let stalled = try await curl(server.url("/big.bin"), ["--max-time", "1"], in: dir)
        #expect(stalled.exitCode == 28)  // CURLE_OPERATION_TIMEDOUT
        #expect(stalled.body == content.prefix(1000))

        try await server.behave(path: "/big.bin", FaultBehaviour(rate: 1_000_000))
        #expect(try await curl(server.url("/big.bin"), in: dir).body == content)
    }

    @Test func statsCountBytesAndConcurrency() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, content) = try fixture(dir, size: 200_000)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        // Every GET stalls after 100 bytes until released: once three are in, they overlap.
        try await server.behave(path: "/big.bin", FaultBehaviour(stallAfter: 100))
        try await withThrowingTaskGroup(of: CurlResult.self) { group in
            for _ in 0..<3 {
                group.addTask { try await curl(server.url("/big.bin"), in: dir) }
            }
            let allIn = try await poll(timeout: .seconds(60)) {
                try await server.stats()["/big.bin"].bytesSent == 300
            }
            #expect(allIn)
            try await server.release(path: "/big.bin")
            for try await result in group {
                #expect(result.exitCode == 0)
                #expect(result.body == content)
            }
        }
        let stats = try await server.stats()
        #expect(stats["/big.bin"].gets == 3)
        #expect(stats["/big.bin"].bytesSent == 3 * content.count)
        #expect(stats["/big.bin"].maxConcurrent == 3)
        #expect(stats["/big.bin"].connections == 3)
        #expect(stats.maxConcurrentConnections == 3)
        #expect(stats.connections == 3)

        try await server.reset()
        let full = try await curl(server.url("/big.bin"), in: dir)
        #expect(full.body == content)
        let after = try await server.stats()
        #expect(after["/big.bin"].bytesSent == content.count)
        #expect(after["/big.bin"].requests == 1)
        #expect(after.maxConcurrentConnections == 1)
    }

    @Test func unknownBehaviourOptionIsRejected() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, _) = try fixture(dir, size: 10)
        let server = try await FaultServer.start(root: root)
        defer { server.stop() }
        let result = try await runProcess(
            executable: "/usr/bin/curl",
            arguments: ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                        "--data-binary", #"{"path": "/x", "dorp_after": 1}"#,
                        server.url("/_control/behave")])
        #expect(result.stdout == "400")
    }

    @Test func serverStopsPromptlyWhileAClientIsStalled() async throws {
        let dir = try TemporaryDirectory(prefix: "selftest")
        let (root, _) = try fixture(dir, size: 10_000)
        let server = try await FaultServer.start(root: root)
        try await server.behave(path: "/big.bin", FaultBehaviour(stallAfter: 10, stallSeconds: 3600))
        async let client = curl(server.url("/big.bin"), ["--max-time", "60"], in: dir)
        #expect(await poll(timeout: .seconds(60)) { (try? await server.stats()["/big.bin"].bytesSent) == 10 })
        server.stop()
        let result = try await client
        #expect(result.exitCode != 0)
        #expect(!isAccepting(port: server.port))
    }
}

extension ServerSelfTests {
    @Test func locatesTheBuiltSyncrBinary() throws {
        let binary = try locateSyncrBinary()
        #expect(binary.lastPathComponent == "syncr")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))
    }
}
