import Foundation
@testable import SyncrCore
import SyncrHTTP
import SyncrLock

/// One answer of a scripted server.
struct Reply: Sendable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// The connection drops after this many body bytes (what curl reports as "transfer closed
    /// with N bytes remaining to read", code 18).
    var dropAfter: Int?
    /// Nothing arrives at all: the attempt fails with this (a refused connection, say).
    var failure: TransferError?
    /// After `pause.after` body bytes, delivery waits for `pause.until` before going on.
    var pause: Pause?
    /// Where the request ended after redirects, when not at its own URL.
    var reached: String?

    struct Pause: Sendable {
        var after: Int
        var until: @Sendable () async -> Void
    }

    /// The connection was refused: nothing was sent, nothing came back.
    static func refused(_ url: String) -> Reply {
        Reply(status: 0, failure: .connection(url: url, code: 7, message: "Failed to connect: connection refused"))
    }

    /// A bodyless status answer, e.g. `Reply.status(503, ["Retry-After": "0"])`.
    static func status(_ code: Int, _ headers: KeyValuePairs<String, String> = [:], body: String = "") -> Reply {
        Reply(status: code, headers: headers.map { ($0.key, $0.value) }, body: Array(body.utf8))
    }

    /// The same answer, cut off after `bytes` body bytes.
    func dropping(after bytes: Int) -> Reply {
        var reply = self
        reply.dropAfter = bytes
        return reply
    }

    /// The same answer with a header replaced (or added).
    func with(_ name: String, _ value: String) -> Reply {
        var reply = self
        reply.headers.removeAll { $0.name.lowercased() == name.lowercased() }
        reply.headers.append((name, value))
        return reply
    }
}

/// A file as a server that follows RFC 9110 serves it (as nginx does): HEAD, GET, `Range`
/// (one range), `If-Range` (a mismatch gets the whole file with 200), 416 past the end.
struct Resource: Sendable {
    var bytes: [UInt8]
    var etag: String? = "\"v1\""
    var lastModified: String?
    /// Whether `Range` is honoured (and `Accept-Ranges: bytes` sent).
    var acceptsRanges = true

    /// `count` bytes of a pattern that differs at every offset within a period of 251 (a prime),
    /// so that a byte written at the wrong place shows.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) &+ seed }
    }

    var size: Int { bytes.count }

    private var validators: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let etag { fields.append(("ETag", etag)) }
        if let lastModified { fields.append(("Last-Modified", lastModified)) }
        if acceptsRanges { fields.append(("Accept-Ranges", "bytes")) }
        return fields
    }

    /// The answer to `request`.
    func answer(_ request: HTTPRequest) -> Reply {
        if request.method == .head {
            return Reply(status: 200, headers: [("Content-Length", "\(size)")] + validators)
        }
        guard let range = request.range, acceptsRanges, ifRangeMatches(request.ifRange) else { return whole() }
        return part(range)
    }

    /// 200 with the whole file.
    func whole() -> Reply {
        Reply(status: 200, headers: [("Content-Length", "\(size)")] + validators, body: bytes)
    }

    /// 206 with the asked range, or 416 when it starts past the end.
    func part(_ range: ByteRange) -> Reply {
        let start = Int(range.start)
        guard start < size else {
            return Reply(status: 416, headers: [("Content-Range", "bytes */\(size)")])
        }
        let end = min(Int(range.end ?? Int64(size - 1)), size - 1)
        return Reply(status: 206,
                     headers: [("Content-Range", "bytes \(start)-\(end)/\(size)"), ("Content-Length", "\(end - start + 1)")]
                         + validators,
                     body: Array(bytes[start...end]))
    }

    private func ifRangeMatches(_ validator: String?) -> Bool {
        guard let validator else { return true }
        return validator == etag || validator == lastModified
    }
}

/// A `Transport` with no socket: each request is answered by a script, and the answer is fed
/// to the sink the way `TransferEngine` feeds it (see `Transport`): a 2xx head to
/// `responseStarted`, the body in 16 KiB pieces as curl hands them over, `finish` at the end;
/// a non-2xx body only as `errorBody`. Every request is logged for the test to inspect.
final class ScriptedTransport: Transport {
    /// Answers the `number`th request (1-based, in arrival order).
    typealias Script = @Sendable (_ request: HTTPRequest, _ number: Int) async -> Reply

    private let script: Script
    private let log = Locked<[HTTPRequest]>([])
    /// The numbers of the attempts whose reply was delivered whole and whose sink settled.
    private let settled = Locked<Set<Int>>([])
    /// What curl's write callback gets at a time (its default buffer).
    static let piece = 16 * 1024

    init(_ script: @escaping Script) {
        self.script = script
    }

    /// A server that serves `resource` and behaves.
    convenience init(serving resource: Resource) {
        self.init { request, _ in resource.answer(request) }
    }

    /// Every request so far, in arrival order.
    var requests: [HTTPRequest] { log.withLock { $0 } }
    /// The GETs so far, in arrival order.
    var gets: [HTTPRequest] { requests.filter { $0.method == .get } }

    /// Waits until the requests logged so far satisfy `condition`; gives up after `turns` turns
    /// of the scheduler (a count of yields, not a time), so that a broken scheduler fails the
    /// test instead of hanging it. Returns whether the condition came true.
    @discardableResult
    func wait(turns: Int = 200_000, until condition: ([HTTPRequest]) -> Bool) async -> Bool {
        await Self.poll(turns: turns) { log.withLock { condition($0) } }
    }

    /// Waits until the attempt that came `number`th (from 1) has delivered its whole reply and
    /// its sink has settled (what it was given is written), as `wait` gives up after `turns`.
    @discardableResult
    func waitSettled(_ number: Int, turns: Int = 200_000) async -> Bool {
        await Self.poll(turns: turns) { settled.withLock { $0.contains(number) } }
    }

    private static func poll(turns: Int, _ condition: () -> Bool) async -> Bool {
        for _ in 0..<turns {
            if condition() { return true }
            if Task.isCancelled { return false }
            await Task.yield()
        }
        return false
    }

    func attempt(_ request: HTTPRequest, sink: ResponseSink) async -> TransferOutcome {
        let number = log.withLock { $0.append(request); return $0.count }
        let reply = await script(request, number)
        if let failure = reply.failure { return TransferOutcome(result: .failure(failure), requestSent: false) }
        var result = await deliver(reply, for: request, to: sink)
        // As TransferEngine does: what the sink holds is written once the transfer is over.
        if let failure = await sink.settle(), case .success = result { result = .failure(failure) }
        settled.withLock { _ = $0.insert(number) }
        return TransferOutcome(result: result, requestSent: true)
    }

    private func deliver(_ reply: Reply, for request: HTTPRequest,
                         to sink: ResponseSink) async -> Result<HTTPResponse, TransferError> {
        let head = HTTPResponseHead(status: reply.status, fields: reply.headers.map { .init(name: $0.name, value: $0.value) },
                                    effectiveURL: reply.reached ?? request.url)
        func response(_ bytes: Int, stopped: Bool = false) -> HTTPResponse {
            HTTPResponse(head: head, bodyBytes: Int64(bytes), stoppedEarly: stopped, errorBody: "")
        }
        guard head.isSuccess else {
            let errorBody = HTTPResponse.printable(Array(reply.body.prefix(1024)))
            return .success(HTTPResponse(head: head, bodyBytes: 0, stoppedEarly: false, errorBody: errorBody))
        }
        switch sink.responseStarted(head) {
        case .proceed: break
        case .stop, .pause: return .success(response(0, stopped: true))
        case .fail(let error): return .failure(error)
        }
        let body = request.method == .head ? [] : reply.body
        let end = min(body.count, reply.dropAfter ?? body.count)
        var delivered = 0
        var ending = SinkDecision.proceed
        var paused = false
        let room = SinkRoom()
        sink.onResume { room.signal() }
        // As TransferEngine does: a transfer stopped from outside its task ends `.cancelled`,
        // even while it waits (in a scripted pause, or for room).
        let stopped = Locked(false)
        let halt = OneShot<Bool>()
        sink.onCancel {
            stopped.withLock { $0 = true }
            halt.fulfil(true)
            room.signal()
        }
        while delivered < end {
            if let pause = reply.pause, !paused, delivered >= pause.after {
                paused = true
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await pause.until() }
                    group.addTask { _ = await halt.wait() }
                    await group.next()
                    group.cancelAll()
                    halt.fulfil(nil)
                }
            }
            if Task.isCancelled || stopped.withLock({ $0 }) {
                _ = sink.finish()
                return .failure(.cancelled)
            }
            var n = min(Self.piece, end - delivered)
            if let pause = reply.pause, !paused, pause.after > delivered { n = min(n, pause.after - delivered) }
            let decision = body.withUnsafeBytes { sink.write(UnsafeRawBufferPointer(rebasing: $0[delivered..<(delivered + n)])) }
            if case .pause = decision {
                // As curl does: the same piece again once the sink says it has room.
                await room.wait()
                continue
            }
            guard case .proceed = decision else {
                ending = decision
                break
            }
            delivered += n
        }
        let finished = sink.finish()
        switch ending {
        case .fail(let error): return .failure(error)
        case .stop: return .success(response(delivered, stopped: true))
        case .proceed, .pause: break  // `.pause` is waited out in the loop, never kept
        }
        if case .fail(let error) = finished { return .failure(error) }
        if delivered < body.count {
            return .failure(.connection(url: request.displayURL, code: 18,
                                        message: "transfer closed with \(body.count - delivered) bytes remaining to read"))
        }
        return .success(response(delivered))
    }
}

extension HTTPRequest {
    /// The `Range` header value, or "-" without one: for readable expectations.
    var rangeText: String { range?.headerValue ?? "-" }
}

/// A sink's "resume" for a scripted transfer it paused: a signal that may come before the wait.
final class SinkRoom: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Locked(State())

    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            defer { s.waiter = nil }
            if s.waiter == nil { s.signalled = true }
            return s.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.signalled { s.signalled = false; return true }
                s.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
