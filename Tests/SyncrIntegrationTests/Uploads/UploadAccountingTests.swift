#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SyncrHTTP
import Testing

/// A server on a socket with a small receive buffer that reads a PUT's head and the first
/// `reads` bytes of its body, then reads nothing more (until the test ends).
final class StoppingServer: @unchecked Sendable {
    // @unchecked: `read` is written by the server's thread before `done` is signalled, and
    // read by the test only after it waited for that.
    let listener: Int32
    let port: Int
    /// The accepted socket's receive buffer, as the kernel reports it (what it can hold
    /// that nobody read).
    private(set) var receiveBuffer = 0
    /// Body bytes the server read.
    private(set) var read = 0
    private let done = DispatchSemaphore(value: 0)
    private var connection: Int32 = -1

    init(reads: Int) throws {
        (listener, port) = try listeningSocket(backlog: 4, receiveBuffer: 32 << 10)
        Thread { [self] in serve(reads: reads) }.start()
    }

    private func serve(reads: Int) {
        defer { done.signal() }
        connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection, SOL_SOCKET, SO_RCVBUF, &size, &length)
        receiveBuffer = Int(size)
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual("\r\n\r\n".utf8), recv(connection, &byte, 1, 0) == 1 { head.append(byte) }
        // curl asks before a body over 1 MiB (Expect: 100-continue).
        _ = "HTTP/1.1 100 Continue\r\n\r\n".withCString { send(connection, $0, 25, 0) }
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while read < reads {
            let n = recv(connection, &buffer, min(buffer.count, reads - read), 0)
            if n <= 0 { break }
            read += n
        }
    }

    /// Waits until the server has read what it reads, then closes its sockets.
    func stop() {
        done.wait()
        if connection >= 0 { close(connection) }
        close(listener)
    }
}

/// What a failed upload counts as sent is what reached the server, not what syncr pushed
/// into curl's buffer and its own socket's: a server that stops reading leaves megabytes in
/// them, which went nowhere.
@Suite(.timeLimit(.minutes(5)))
struct UploadAccountingTests {
    @Test func aStalledUploadCountsWhatTheServersTCPTook() async throws {
        let folder = try TemporaryDirectory(prefix: "upload-accounting")
        let file = folder.appending("big.bin")
        try Data(repeating: 5, count: 16 << 20).write(to: file)
        let server = try StoppingServer(reads: 256 << 10)
        let engine = TransferEngine()
        defer { engine.shutdown() }
        var request = HTTPRequest.upload(.file(path: file.path), url: "http://127.0.0.1:\(server.port)/up/big.bin",
                                         displayURL: "big.bin")
        request.stallMilliseconds = 1000
        let progress = BodyProgress()
        request.bodyProgress = progress
        let outcome = await engine.perform(request, sink: DiscardSink())
        server.stop()
        guard case .failure(.stalled) = outcome else {
            Issue.record("expected a stall, got \(outcome)")
            return
        }
        // At least what the server read; at most that and what its socket could hold unread.
        // curl's buffer and this side's socket buffer held more, which never arrived.
        #expect(progress.sent >= Int64(server.read), "\(progress.sent) counted, \(server.read) read")
        #expect(progress.sent <= Int64(server.read + server.receiveBuffer),
                "\(progress.sent) counted, \(server.read) read, \(server.receiveBuffer) bytes of receive buffer")
    }
}
