import CCurl
import Foundation
import Synchronization
import SyncrLock

/// Runs every HTTP transfer of a syncr run on one thread driving a libcurl multi handle.
///
/// One multi handle means one connection cache and one DNS cache for all transfers, so many
/// files from one host reuse connections, and one place caps connections per host. Callers
/// submit requests from any task with `perform` or `attempt` (its `Transport` conformance),
/// which suspend until the transfer ends.
public final class TransferEngine: Transport, @unchecked Sendable {
    // @unchecked Sendable: `multi` and `active` are touched only by the engine thread; the
    // other threads reach it only through `inbox` (a lock) and `curl_multi_wakeup`, which
    // libcurl documents as callable from any thread.

    /// Limits and buffers for the whole engine.
    public struct Configuration: Sendable {
        /// At most this many connections to one host at once (queued beyond it).
        public var maxConnectionsPerHost: Int
        /// At most this many connections in all (0: no limit beyond the per-host one).
        public var maxTotalConnections: Int
        /// The receive buffer of each transfer: 512 KiB measured fastest on loopback.
        public var bufferSize: Int
        /// The proxy variables of every request that brings none of its own (`HTTPRequest.proxies`).
        public var proxies: ProxyEnvironment

        /// Creates a configuration; the defaults are what a session of its own uses.
        /// - Parameter proxies: nil: the process's environment, read now, once for every
        ///   request of the engine (a session makes one engine for its run).
        public init(maxConnectionsPerHost: Int = 16, maxTotalConnections: Int = 0, bufferSize: Int = 512 * 1024,
                    proxies: ProxyEnvironment? = nil) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxTotalConnections = maxTotalConnections
            self.bufferSize = bufferSize
            self.proxies = proxies ?? .process
        }
    }

    private struct Inbox {
        var added: [Transfer] = []
        /// Transfers whose sinks paused them and now have room.
        var resumed: [Transfer] = []
        var cancelled = false
        var stopping = false
        /// The engine thread is (about to be) waiting in `curl_multi_poll` with nothing added:
        /// the next request must wake it. While it works it finds new requests on its own, so
        /// most submissions cost no wake-up (a write to curl's wake-up descriptor, and a read).
        var sleeping = false
        /// The engine thread has left its loop and frees the multi handle: nothing may wake it.
        /// A disk writer can post a resume at any time, even after the run ended.
        var closed = false
    }

    public let configuration: Configuration
    private let multi: UnsafeMutableRawPointer
    private let inbox = Locked(Inbox())
    private var active: [ObjectIdentifier: Transfer] = [:]
    /// The transfers of `active` with a request body, whose bytes sent are looked at each pass.
    private var sending: [ObjectIdentifier: Transfer] = [:]
    /// When the engine thread looks for stalled transfers next (`Monotonic.nanoseconds`).
    private var nextStallCheck: UInt64 = 0
    /// The easy handles of finished transfers, for the next ones (as many as stay connected).
    let handles: EasyHandlePool
    private let stopped = Atomic<Bool>(false)
    /// Posters that decided, under the inbox lock, to wake the engine thread and have not yet
    /// done so. The wake-up is sent after the lock is let go (see `post`); the multi handle is
    /// freed only once none is left.
    private let waking = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// The threads that read request bodies ahead of curl (`ReadAhead`).
    let disk: DiskWriter

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// Initialises libcurl for the process (TLS library included, about a millisecond), which
    /// the first engine would otherwise do: a caller may do it on another thread beforehand,
    /// while it reads its input. Idempotent; an engine made meanwhile waits for it. Not safe
    /// while other code in the process uses libcurl (its global initialisation is not).
    public static func prepareLibrary() {
        _ = globalInit
    }

    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, disk: .shared)
    }

    /// - Parameter disk: where request bodies are read (a test plays a slow disk with it).
    init(configuration: Configuration, disk: DiskWriter) {
        _ = Self.globalInit
        self.configuration = configuration
        self.disk = disk
        handles = EasyHandlePool(capacity: max(32, configuration.maxConnectionsPerHost * 2))
        guard let m = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        multi = m
        syncr_multi_setopt_long(m, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        syncr_multi_setopt_long(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        // Keep enough idle connections around to reuse them across files.
        syncr_multi_setopt_long(m, CURLMOPT_MAXCONNECTS, max(32, configuration.maxConnectionsPerHost * 2))
        Thread.start(named: "syncr-transfers") { [self] in self.run() }
    }

    /// Stops the engine thread, failing transfers still running with `.cancelled`.
    /// Blocks until the thread has released every handle.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        post(always: true) { $0.stopping = true }
        finished.wait()
    }

    /// One hop of `attempt`: a single request, redirects not followed.
    func attemptOnce(_ request: HTTPRequest, sink: ResponseSink) async -> TransferOutcome {
        guard !stopped.load(ordering: .acquiring) else { return TransferOutcome(result: .failure(.cancelled), requestSent: false) }
        var reader: ReadAhead? = nil
        if let body = request.body {
            guard request.method == .put || request.method == .post else {
                return TransferOutcome(result: .failure(.local(path: Self.displayPath(body), errno: EINVAL,
                    message: "cannot be sent with \(request.method.rawValue) \(request.displayURL): only PUT and POST carry a body")),
                    requestSent: false)
            }
            switch BodyReader.open(body) {
            case .success(let r): reader = ReadAhead(r, path: Self.displayPath(body), disk: disk)
            case .failure(let error): return TransferOutcome(result: .failure(error), requestSent: false)
            }
            // The first buffer (all of a small body) is read here, off the engine thread.
            reader?.prime()
        }
        guard let transfer = Transfer(request: request, sink: sink, body: reader, bufferSize: configuration.bufferSize,
                                      proxies: request.proxies ?? configuration.proxies, handles: handles) else {
            reader?.close()
            return TransferOutcome(result: .failure(.connection(url: request.displayURL, code: -1, message: "cannot create a curl handle")),
                                   requestSent: false)
        }
        // Strong references: the sink drops the handlers in `settle`, below, which breaks the
        // cycle transfer -> sink -> handler -> transfer (weak ones cost a side table each).
        sink.onResume { [self] in post { $0.resumed.append(transfer) } }
        reader?.onResume { [self] in post { $0.resumed.append(transfer) } }
        sink.onCancel { [self] in cancel(transfer) }
        var outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                // An engine that closed meanwhile (shut down) would never answer.
                if !post({ $0.added.append(transfer) }) {
                    transfer.continuation = nil
                    continuation.resume(returning: transfer.outcome(.failure(.cancelled), code: nil))
                }
            }
        } onCancel: {
            cancel(transfer)
        }
        // The engine is done with the transfer. Whichever way it ended (some ways, such as a
        // cancellation before curl saw it, skip `finish`), the body lets go of its file, its
        // buffers and its resume handler, which holds the transfer.
        reader?.close()
        // The bytes the sink still holds are written here, off the engine thread; a failure to
        // write them turns a good answer into that failure.
        if let failure = await sink.settle(), case .success = outcome.result {
            outcome.result = .failure(failure)
        }
        return outcome
    }

    /// The body's file, for messages.
    private static func displayPath(_ body: RequestBody) -> String {
        switch body {
        case .file(let path), .fileRange(let path, _, _, _): return path
        case .multipart(let form):
            // A form of one file is that file to its user (`field: file`, the usual upload).
            let files = form.segments.compactMap { segment -> String? in
                if case .file(let path, _) = segment { return path } else { return nil }
            }
            switch files.count {
            case 0: return "a form"
            case 1: return files[0]
            default: return "a form of \(files.count) files"
            }
        }
    }

    /// Asks the engine thread to end `transfer` with `.cancelled`, wherever it is.
    private func cancel(_ transfer: Transfer) {
        transfer.cancelRequested.store(true, ordering: .relaxed)
        post(always: true) { $0.cancelled = true }
    }

    /// Puts something in the inbox for the engine thread and wakes it if it sleeps (or
    /// `always`). Returns false when the engine has closed, and the change was not made.
    ///
    /// The wake-up is sent after the lock is let go: sent under it, the woken engine thread
    /// found the lock still held and slept on it again, to be woken once more when the poster
    /// let go (two more system calls and a switch per wake-up). `waking` keeps the multi
    /// handle alive until it is sent.
    @discardableResult
    private func post(always: Bool = false, _ change: (inout Inbox) -> Void) -> Bool {
        let wake = inbox.withLock { box -> Bool? in
            guard !box.closed else { return nil }
            change(&box)
            let wake = box.sleeping || always
            box.sleeping = false
            if wake { waking.add(1, ordering: .relaxed) }
            return wake
        }
        guard let wake else { return false }
        if wake {
            curl_multi_wakeup(multi)
            waking.subtract(1, ordering: .releasing)
        }
        return true
    }

    // MARK: engine thread

    private func run() {
        var running: Int32 = 0
        while true {
            let (added, resumed, cancelled, stopping) = inbox.withLock { box -> ([Transfer], [Transfer], Bool, Bool) in
                // Awake: a request posted from here on is found without a wake-up.
                box.sleeping = false
                defer { box.added = []; box.resumed = []; box.cancelled = false }
                // Closed in the same look that takes the last requests: one posted later is
                // refused at once (`post`), never left waiting for a loop that has ended.
                if box.stopping { box.closed = true }
                return (box.added, box.resumed, box.cancelled, box.stopping)
            }
            if stopping {
                for t in added { t.continuation?.resume(returning: t.outcome(.failure(.cancelled), code: nil)); t.continuation = nil }
                for t in Array(active.values) { t.abandon(); complete(t, with: .failure(.cancelled)) }
                break
            }
            for t in added {
                if t.cancelRequested.load(ordering: .relaxed) {
                    t.continuation?.resume(returning: t.outcome(.failure(.cancelled), code: nil))
                    t.continuation = nil
                    continue
                }
                active[ObjectIdentifier(t)] = t
                if t.body != nil { sending[ObjectIdentifier(t)] = t }
                curl_multi_add_handle(multi, t.easy)
            }
            // A transfer that ended meanwhile is no longer active: nothing to resume.
            for t in resumed where active[ObjectIdentifier(t)] === t {
                let code = t.resume()
                // BAD_FUNCTION_ARGUMENT: no connection to resume on (curl started the request
                // over and it waits for one): nothing is paused, nothing failed.
                if code != CURLE_OK && code != CURLE_BAD_FUNCTION_ARGUMENT {
                    complete(t, with: t.finish(code: code), code: code)
                }
            }
            if cancelled {
                for t in active.values where t.cancelRequested.load(ordering: .relaxed) {
                    t.abandon()
                    complete(t, with: .failure(.cancelled))
                }
            }
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                var privatePointer: UnsafeMutableRawPointer? = nil
                syncr_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privatePointer)
                guard let privatePointer else { continue }
                let t = Unmanaged<Transfer>.fromOpaque(privatePointer).takeUnretainedValue()
                complete(t, with: t.finish(code: code), code: code)
            }
            let now = Monotonic.nanoseconds()
            for t in sending.values { t.noteSent(now: now) }
            if now >= nextStallCheck { nextStallCheck = failStalled(now: now) }
            // Waits only when nothing was added meanwhile; a request added after this look
            // finds `sleeping` set and wakes the poll.
            let idle = inbox.withLock { box -> Bool in
                guard box.added.isEmpty, box.resumed.isEmpty, !box.cancelled, !box.stopping else { return false }
                box.sleeping = true
                return true
            }
            // Woken by a socket, curl's own timers, or the next stall check, whichever is first.
            let untilCheck = Int32(clamping: (nextStallCheck &- min(now, nextStallCheck)) / 1_000_000 + 1)
            curl_multi_poll(multi, nil, 0, idle ? min(1000, untilCheck) : 0, nil)
        }
        // Closed: no poster starts a wake-up any more; the ones under way end in a moment.
        while waking.load(ordering: .acquiring) > 0 { sched_yield() }
        curl_multi_cleanup(multi)
        finished.signal()
    }

    /// Fails the transfers in which nothing moved for their `stallMilliseconds` (no byte received,
    /// and for a request body none sent: `Transfer.stallDeadline`) and returns when to look
    /// again: at the earliest deadline left, at most a second on.
    /// curl's low-speed limit cannot do this on time: it averages the speed over the last
    /// five seconds, so a transfer that stopped dead after a fast start still counted as fast
    /// for seconds, and failed that much later than its `timeout`.
    private func failStalled(now: UInt64) -> UInt64 {
        var next = now + 1_000_000_000
        var stalled: [Transfer] = []
        for t in active.values {
            guard let deadline = t.stallDeadline(now: now) else { continue }
            if deadline <= now { stalled.append(t) } else { next = min(next, deadline) }
        }
        for t in stalled { complete(t, with: .failure(t.stall())) }
        return next
    }

    private func complete(_ t: Transfer, with result: Result<HTTPResponse, TransferError>, code: CURLcode? = nil) {
        curl_multi_remove_handle(multi, t.easy)
        active[ObjectIdentifier(t)] = nil
        sending[ObjectIdentifier(t)] = nil
        t.body?.close()
        t.continuation?.resume(returning: t.outcome(result, code: code))
        t.continuation = nil
    }
}

/// The result of one attempt at a request, with what a retry decision needs beyond the error.
public struct TransferOutcome: Sendable {
    /// The answer, or why there is none (as `TransferEngine.perform` returns it).
    public var result: Result<HTTPResponse, TransferError>
    /// Whether any of the request (headers or body) may have reached the server. False only
    /// when it certainly did not: the name did not resolve, the connection was refused or
    /// timed out, a body file could not be opened, or the attempt was cancelled before it began.
    public var requestSent: Bool

    public init(result: Result<HTTPResponse, TransferError>, requestSent: Bool) {
        self.result = result
        self.requestSent = requestSent
    }
}

extension Transfer {
    /// The outcome for the submitter; `code` is curl's result when curl finished the transfer.
    func outcome(_ result: Result<HTTPResponse, TransferError>, code: CURLcode?) -> TransferOutcome {
        if case .success = result { return TransferOutcome(result: result, requestSent: true) }
        return TransferOutcome(result: result, requestSent: requestSent(code: code))
    }
}
