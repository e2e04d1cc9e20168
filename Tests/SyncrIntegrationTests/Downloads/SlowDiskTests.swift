#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
@testable import SyncrHTTP
import Testing

/// One file on a slow disk must not stall the other transfers: the engine thread never writes
/// to disk. A `DiskWriter` whose writes wait at a gate plays the slow disk (a real one, such as
/// a `dm-delay` device, needs root and a kernel module); nginx on 127.0.0.1 is the real server.
@Suite("slow disk", .timeLimit(.minutes(5)))
struct SlowDiskTests {
    enum Wire: String, CaseIterable, Sendable {
        case http1 = "HTTP/1.1"
        case http2 = "HTTP/2 over TLS"
    }

    @Test(arguments: Wire.allCases)
    func aTransferStuckOnItsDiskPausesWhileOthersFinish(_ protocolKind: Wire) async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let big = try makeFile(path: www.appending("big.bin"), size: 8 << 20, seed: 41)
        for i in 0..<12 { try makeFile(path: www.appending("small\(i).bin"), size: 300_000 + i, seed: UInt64(50 + i)) }
        let certificates = protocolKind == .http2 ? try await TestCertificates.make() : nil
        let nginx = try await Nginx.start(root: www.url,
                                          options: .init(tls: certificates?.server, http2: protocolKind == .http2))
        defer { nginx.stop() }
        func request(_ path: String) -> HTTPRequest {
            var request = HTTPRequest(url: nginx.url(path), displayURL: nginx.url(path))
            if let certificates { request.tls = TLSOptions(extraAnchors: [certificates.caCertificate.path]) }
            return request
        }
        let engine = TransferEngine()
        defer { engine.shutdown() }
        let out = try TemporaryDirectory(prefix: "out")

        // The slow disk: every write of the big file waits until the gate opens.
        let open = Atomic<Bool>(false)
        let slowDisk = DiskWriter(threads: 1) { _, _ in
            while !open.load(ordering: .acquiring) { usleep(1000) }
        }
        let bigFile = try OpenFile(out.appending("big.bin").path)
        let bigSink = FileSink(fd: bigFile.fd, offset: 0, requestedRange: nil, expectedTotal: nil,
                               displayURL: "big.bin", displayPath: bigFile.path, writer: slowDisk)
        let bigTransfer = Task { await engine.perform(request("/big.bin"), sink: bigSink) }
        // It fills its two 256 KiB buffers, up to the last piece curl offers (16 KiB at most)
        // that does not fit, then pauses: nothing more is taken while the disk is stuck.
        let held = Int64((512 << 10) - (16 << 10)) ... Int64(512 << 10)
        _ = await pollOnItsOwnThread { held.contains(bigSink.received) }  // the expectation below says what it waited for
        let paused = bigSink.received
        #expect(held.contains(paused), "the stuck transfer holds two buffers: \(paused)")

        // Meanwhile the other files arrive whole, through the same engine.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<12 {
                group.addTask {
                    let file = try OpenFile(out.appending("small\(i).bin").path)
                    let sink = FileSink(fd: file.fd, offset: 0, requestedRange: nil, expectedTotal: nil,
                                        displayURL: "small\(i).bin", displayPath: file.path)
                    let result = await engine.perform(request("/small\(i).bin"), sink: sink)
                    guard case .success(let response) = result else {
                        Issue.record("small\(i).bin: \(result)")
                        return
                    }
                    #expect(response.head.status == 200)
                    #expect(sink.written == Int64(300_000 + i))
                }
            }
            try await group.waitForAll()
        }
        for i in 0..<12 {
            #expect(FileManager.default.contents(atPath: out.appending("small\(i).bin").path)
                    == FileManager.default.contents(atPath: www.appending("small\(i).bin").path), "small\(i).bin")
        }
        #expect(bigSink.received == paused, "still paused, so memory is still bounded")
        #expect(bigSink.written == 0)

        // The disk recovers: the big file resumes and lands byte-identical.
        open.store(true, ordering: .releasing)
        let result = await bigTransfer.value
        guard case .success(let response) = result else {
            Issue.record("big.bin: \(result)")
            return
        }
        #expect(response.head.status == 200)
        #expect(response.bodyBytes == 8 << 20)
        #expect(bigSink.written == 8 << 20)
        #expect(try await sha256(file: out.appending("big.bin")) == (try await sha256(file: big)))
        let log = try await nginx.accessLog(atLeast: 13)
        let expected = protocolKind == .http2 ? "HTTP/2.0" : "HTTP/1.1"
        #expect(log.allSatisfy { $0.serverProtocol == expected }, "\(log.map(\.serverProtocol))")
    }

    /// The same for an upload: its body is read on a disk thread (`ReadAhead`), so a body
    /// whose disk is stuck pauses its own PUT while downloads through the same engine finish.
    @Test(arguments: Wire.allCases)
    func anUploadStuckOnItsDiskPausesWhileOthersFinish(_ protocolKind: Wire) async throws {
        let www = try TemporaryDirectory(prefix: "www")
        for i in 0..<12 { try makeFile(path: www.appending("small\(i).bin"), size: 300_000 + i, seed: UInt64(70 + i)) }
        let source = try makeFile(path: www.appending("upload.bin"), size: 8 << 20, seed: 69)
        let certificates = protocolKind == .http2 ? try await TestCertificates.make() : nil
        let nginx = try await Nginx.start(root: www.url,
                                          options: .init(tls: certificates?.server, http2: protocolKind == .http2))
        defer { nginx.stop() }
        func tls(_ request: HTTPRequest) -> HTTPRequest {
            var request = request
            if let certificates { request.tls = TLSOptions(extraAnchors: [certificates.caCertificate.path]) }
            return request
        }

        // The slow disk: the body's first buffer is read before the request goes out; every
        // read after it waits until the gate opens.
        let slowDisk = StuckAfterFirstRead()
        // However the test ends, the disk thread does not wait for the rest of the run.
        defer { slowDisk.open() }
        let engine = TransferEngine(configuration: .init(), disk: slowDisk.disk)
        defer { engine.shutdown() }
        let url = nginx.url("/upload/upload.bin")
        var request = tls(.upload(.file(path: source.path), url: url, displayURL: url))
        // libcurl counts a paused send against the low-speed limit (30 s by default), and the
        // downloads below have taken longer than that in a full run under a sanitizer.
        request.lowSpeedTimeSeconds = 600
        let upload = Task { [request] in await engine.attempt(request, sink: BodyPrefixSink()) }
        _ = await pollOnItsOwnThread { slowDisk.reads >= 2 }
        #expect(slowDisk.reads == 2, "the second read is stuck")

        let out = try TemporaryDirectory(prefix: "out")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<12 {
                group.addTask {
                    let file = try OpenFile(out.appending("small\(i).bin").path)
                    let sink = FileSink(fd: file.fd, offset: 0, requestedRange: nil, expectedTotal: nil,
                                        displayURL: "small\(i).bin", displayPath: file.path)
                    let path = "/small\(i).bin"
                    let result = await engine.perform(tls(HTTPRequest(url: nginx.url(path), displayURL: path)), sink: sink)
                    guard case .success(let response) = result else {
                        Issue.record("small\(i).bin: \(result)")
                        return
                    }
                    #expect(response.head.status == 200)
                    #expect(sink.written == Int64(300_000 + i))
                }
            }
            try await group.waitForAll()
        }
        #expect(slowDisk.reads == 2, "nothing more was read while the disk was stuck")

        // The disk recovers: the PUT goes on and the server stores the file byte-identical.
        slowDisk.open()
        let outcome = await upload.value
        guard case .success(let response) = outcome.result else {
            Issue.record("upload.bin: \(outcome.result)")
            return
        }
        #expect(response.head.status == 201)
        #expect(response.uploadedBytes == 8 << 20)
        let stored = nginx.uploadDirectory.appendingPathComponent("upload.bin")
        #expect(try await sha256(file: stored) == (try await sha256(file: source)))
        let log = try await nginx.accessLog(atLeast: 13)
        let expected = protocolKind == .http2 ? "HTTP/2.0" : "HTTP/1.1"
        #expect(log.allSatisfy { $0.serverProtocol == expected }, "\(log.map(\.serverProtocol))")
    }

    /// A body whose disk gives nothing for the request's low-speed time: libcurl counts a paused
    /// send against it (only paused receiving is exempt), and the error blames the disk, names
    /// the file, and is not one to retry.
    @Test func anUploadWhoseDiskGivesNothingForTheTimeoutFailsNamingTheDisk() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        let source = try makeFile(path: www.appending("upload.bin"), size: 4 << 20, seed: 88)
        let nginx = try await Nginx.start(root: www.url)
        defer { nginx.stop() }
        let stuckDisk = StuckAfterFirstRead()
        defer { stuckDisk.open() }
        let engine = TransferEngine(configuration: .init(), disk: stuckDisk.disk)
        defer { engine.shutdown() }
        let url = nginx.url("/upload/upload.bin")
        var request = HTTPRequest.upload(.file(path: source.path), url: url, displayURL: url)
        request.lowSpeedTimeSeconds = 2
        let outcome = await engine.attempt(request, sink: BodyPrefixSink())
        guard case .failure(let error) = outcome.result else {
            Issue.record("expected a failure, got \(outcome.result)")
            return
        }
        guard case .local(let path, let code, let message) = error else {
            Issue.record("expected a local error, got \(error)")
            return
        }
        #expect(path == source.path)
        #expect(code == ETIMEDOUT)
        #expect(message.contains("the disk gave no bytes of the upload for 2 s"), "\(message)")
        #expect(!RetryPolicy(maxRetries: 3).isRetryable(error, method: .put, requestSent: true),
                "the same disk would hold a retry up too")
        #expect(!FileManager.default.fileExists(atPath: nginx.uploadDirectory.appendingPathComponent("upload.bin").path),
                "nothing stored")
    }
}

/// A disk that answers a request body's first read (the one `ReadAhead.prime` makes before the
/// request goes out) and holds every later one until `open()`.
final class StuckAfterFirstRead: Sendable {
    private final class Gate: Sendable {
        let reads = Atomic<Int>(0)
        let isOpen = Atomic<Bool>(false)
    }
    private let gate: Gate
    let disk: DiskWriter

    init() {
        let gate = Gate()
        self.gate = gate
        disk = DiskWriter(threads: 1, beforeRead: { _ in
            if gate.reads.add(1, ordering: .relaxed).newValue > 1 {
                while !gate.isOpen.load(ordering: .acquiring) { usleep(1000) }
            }
        })
    }

    /// Reads asked for so far, the one waiting included.
    var reads: Int { gate.reads.load(ordering: .relaxed) }

    func open() { gate.isOpen.store(true, ordering: .releasing) }
}
