#if canImport(Glibc)
import Glibc
#endif
import CCurl
import CSystem
import Synchronization

/// One request in flight: holds its curl easy handle (from the engine's `EasyHandlePool`) and
/// the state its callbacks fill in.
///
/// `@unchecked Sendable`: after `submit`, every mutable field is touched only by the engine
/// thread (the curl callbacks run there); the submitting task reads the result only through the
/// continuation, which the engine resumes after its last access. `cancelRequested` is atomic.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let sink: ResponseSink
    /// The request body, read ahead on a disk thread; its file is open until `finish`.
    let body: ReadAhead?
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var continuation: CheckedContinuation<TransferOutcome, Never>?
    let cancelRequested = Atomic<Bool>(false)

    // Filled by callbacks on the engine thread.
    private var fields: [HTTPResponseHead.HeaderField] = []
    private var head: HTTPResponseHead?
    private var bodyStarted = false
    /// The sink accepted the response, so it may hold bytes to flush at the end.
    private var sinkAccepted = false
    private var bodyIsError = false
    private var errorBytes: [UInt8] = []
    private(set) var bodyBytes: Int64 = 0
    private(set) var sinkOutcome: SinkDecision?
    /// The last piece curl offered was refused with `.pause` and not offered again yet. A
    /// transfer that ends so has lost it: libcurl before 8.8 could finish a paused transfer.
    private var holdingPiece = false
    private var errorBodyCapped = false
    /// When the last byte of the answer arrived, or (a request with a body) the engine last
    /// saw body bytes sent (`Monotonic.nanoseconds`); 0 before the first.
    private var lastDataAt: UInt64 = 0
    /// curl's count of body bytes sent when the engine last looked (`noteSent(now:)`).
    private var sentSeen: Int64 = 0
    /// The sockets curl made for this transfer (told by `CURLOPT_SOCKOPTFUNCTION`; none when
    /// it reuses a connection): how much of a failed body the server took is asked of one.
    private var sockets: [Int32] = []

    /// Where the handle comes from and goes back to.
    private let handles: EasyHandlePool
    /// The proxy this request goes through (nil: directly), chosen once, before curl is told.
    let route: ProxyRoute?

    /// - Parameter proxies: the variables the request's proxy is chosen from.
    init?(request: HTTPRequest, sink: ResponseSink, body: ReadAhead?, bufferSize: Int, proxies: ProxyEnvironment,
          handles: EasyHandlePool) {
        guard let easy = handles.take() else { return nil }
        self.handles = handles
        self.request = request
        self.sink = sink
        self.body = body
        self.easy = easy
        route = proxies.route(for: request.url)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure(bufferSize: bufferSize)
    }

    deinit {
        // The engine removed it from the multi handle before it let go of this transfer.
        handles.give(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func configure(bufferSize: Int) {
        let h = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        syncr_easy_setopt_string(h, CURLOPT_URL, request.url)
        if request.pathAsIs { syncr_easy_setopt_long(h, CURLOPT_PATH_AS_IS, 1) }
        syncr_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        syncr_easy_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https")
        syncr_easy_setopt_string(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Redirects are followed by the engine, one transfer per hop, so that each is checked
        // (RedirectPolicy); curl only reports the target (CURLINFO_REDIRECT_URL).
        syncr_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0)
        configureSecurity()
        configureProxy()
        syncr_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeoutMilliseconds)
        syncr_easy_setopt_long(h, CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedLimit)
        syncr_easy_setopt_long(h, CURLOPT_LOW_SPEED_TIME, request.lowSpeedTimeSeconds)
        // A HEAD answer has no body: curl's default 16 KiB holds its head. The large buffer is
        // for bodies; curl allocates it for every transfer, and with dozens of probes in flight
        // the pages they touch spread over tens of megabytes of heap.
        syncr_easy_setopt_long(h, CURLOPT_BUFFERSIZE, request.method == .head ? min(bufferSize, 16 << 10) : bufferSize)
        syncr_easy_setopt_long(h, CURLOPT_TCP_KEEPALIVE, 1)
        configureConnectionSharing()
        syncr_easy_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorBuffer)
        syncr_easy_setopt_pointer(h, CURLOPT_PRIVATE, me)
        syncr_easy_setopt_string(h, CURLOPT_USERAGENT, "syncr/\(SyncrHTTPInfo.version)")
        var list: UnsafeMutablePointer<curl_slist>? = nil
        switch (request.method, body) {
        case (.get, _): syncr_easy_setopt_long(h, CURLOPT_HTTPGET, 1)
        case (.head, _): syncr_easy_setopt_long(h, CURLOPT_NOBODY, 1)
        case (.put, let body?):
            // CURLOPT_UPLOAD over HTTP is a PUT; with the size set it carries Content-Length.
            syncr_easy_setopt_long(h, CURLOPT_UPLOAD, 1)
            syncr_easy_setopt_off(h, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.length))
            configureBody(bufferSize: bufferSize)
        case (.post, let body?):
            syncr_easy_setopt_long(h, CURLOPT_POST, 1)
            syncr_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.length))
            configureBody(bufferSize: bufferSize)
            // curl resends a request on its own when a reused connection turns out to be dead
            // before any answer arrived, rewinding the body: harmless for a PUT (idempotent), but
            // a POST the server had already acted on would then be applied twice (RFC 9110
            // §9.2.2). A fresh connection per POST leaves curl nothing to resend, so every
            // POST is sent once per attempt and the caller decides about retries.
            syncr_easy_setopt_long(h, CURLOPT_FRESH_CONNECT, 1)
            // Without a Content-Type curl would label the body form-urlencoded.
            if !hasHeader("Content-Type"), case .file(let path)? = request.body {
                list = curl_slist_append(list, "Content-Type: \(ContentType.forFilename(path))")
            }
        case (.put, nil), (.post, nil), (.delete, _):
            syncr_easy_setopt_string(h, CURLOPT_CUSTOMREQUEST, request.method.rawValue)
        }
        if let type = request.body?.contentType, !hasHeader("Content-Type") {
            list = curl_slist_append(list, "Content-Type: \(type)")
        }
        for (name, value) in request.headers {
            // "Name;" is curl's way to send a header with an empty value.
            list = curl_slist_append(list, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if let range = request.range { list = curl_slist_append(list, "Range: \(range.headerValue)") }
        if let ifRange = request.ifRange { list = curl_slist_append(list, "If-Range: \(ifRange)") }
        headerList = list
        syncr_easy_setopt_slist(h, CURLOPT_HTTPHEADER, list)
        syncr_easy_setopt_data_callback(h, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        syncr_easy_setopt_pointer(h, CURLOPT_HEADERDATA, me)
        syncr_easy_setopt_data_callback(h, CURLOPT_WRITEFUNCTION, transferWriteCallback)
        syncr_easy_setopt_pointer(h, CURLOPT_WRITEDATA, me)
    }

    /// Whether this transfer may share a connection with others in flight.
    ///
    /// Requests to one host share a multiplexed HTTP/2 connection, and wait for one being set up
    /// rather than open their own (`CURLOPT_PIPEWAIT`): cheap for many small files. A request
    /// that needs its own connection is sent over HTTP/1.1 (ALPN offers http/1.1 alone, as aria2
    /// does), which carries one request at a time: curl never multiplexes it and never puts it on
    /// an HTTP/2 connection, while still reusing an idle HTTP/1.1 connection (the next piece of a
    /// file takes the one the last piece left), and `CURLMOPT_MAX_HOST_CONNECTIONS` still counts
    /// it. Keeping HTTP/2 with a fresh connection per piece measured no faster (64 MiB through a
    /// proxy capping each connection at 5 MiB/s: 1.8-2.0 s either way, against 19-20 s with the
    /// pieces multiplexed), costs a TLS handshake for every piece, stolen ones included, and would
    /// let other requests multiplex onto a piece's connection.
    ///
    /// Only `https` waits: HTTP/2 is agreed in the TLS handshake (ALPN), after which curl lets
    /// the waiting requests go. A plain `http` connection never multiplexes (syncr does not
    /// speak HTTP/2 without TLS), yet curl 7.88 let the requests waiting on it go only when its
    /// first transfer ended: every other file from that server waited for the first one's
    /// lead request, a whole large file with `connections: 1`, however large `jobs` was.
    private func configureConnectionSharing() {
        if request.ownConnection {
            syncr_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
            syncr_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 0)
        } else {
            let tls = request.url.utf8.count > 6 && request.url.prefix(6).lowercased() == "https:"
            syncr_easy_setopt_long(easy, CURLOPT_PIPEWAIT, tls ? 1 : 0)
        }
    }

    /// The proxy chosen for this request (`route`), and no other: an empty `CURLOPT_PROXY`
    /// keeps curl from reading the environment itself, and an empty `CURLOPT_NOPROXY` from
    /// dropping the chosen one by its own reading of `no_proxy` (which, in curl 7.88, matched
    /// no IPv6 range). What the proxy says of itself is worded in `Transfer+Proxy.swift`.
    private func configureProxy() {
        syncr_easy_setopt_string(easy, CURLOPT_PROXY, route?.written ?? "")
        syncr_easy_setopt_string(easy, CURLOPT_NOPROXY, "")
    }

    /// Certificate checks, extra trusted CAs, netrc.
    private func configureSecurity() {
        let h = easy
        syncr_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, request.tls.verify ? 1 : 0)
        syncr_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, request.tls.verify ? 2 : 0)
        // Only a TLS hop reads it; curl copies the blob into every handle it is set on.
        if let bundle = request.trustBundle, request.url.prefix(6).lowercased() == "https:" {
            bundle.pem.withUnsafeBytes { _ = syncr_easy_setopt_cainfo_blob(h, $0.baseAddress, $0.count) }
        }
        if request.netrc {
            syncr_easy_setopt_long(h, CURLOPT_NETRC, syncr_netrc_optional())
            if let file = request.netrcFile { syncr_easy_setopt_string(h, CURLOPT_NETRC_FILE, file) }
        }
    }

    private func hasHeader(_ name: String) -> Bool {
        request.headers.contains { $0.name.lowercased() == name.lowercased() }
    }

    /// Read and seek callbacks for a request body.
    ///
    /// `Expect: 100-continue` is left as curl does it (sent for bodies over 1 MiB) with the wait
    /// for `100 Continue` set to 1 s: a server that refuses the upload (413, 401, 507, a
    /// redirect) then answers before the body is sent, instead of after reading, or cutting
    /// off, gigabytes; a server that ignores `Expect` costs one second per upload at most.
    private func configureBody(bufferSize: Int) {
        let h = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        syncr_easy_setopt_data_callback(h, CURLOPT_READFUNCTION, transferReadCallback)
        syncr_easy_setopt_pointer(h, CURLOPT_READDATA, me)
        syncr_easy_setopt_seek_callback(h, transferSeekCallback)
        syncr_easy_setopt_pointer(h, CURLOPT_SEEKDATA, me)
        syncr_easy_setopt_long(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 1000)
        syncr_easy_setopt_sockopt_callback(h, transferSockoptCallback)
        syncr_easy_setopt_pointer(h, CURLOPT_SOCKOPTDATA, me)
        // The read callback is asked for up to this many bytes at a time; curl caps it at 2 MiB.
        syncr_easy_setopt_long(h, CURLOPT_UPLOAD_BUFFERSIZE, min(bufferSize, 2 << 20))
    }

    // MARK: callbacks (engine thread)

    /// Fills curl's upload buffer from what was read ahead; returns the byte count, curl's
    /// pause value when nothing is read yet (the reader resumes the transfer), or its abort
    /// value on failure.
    func readBody(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let body else { return 0 }
        if cancelRequested.load(ordering: .relaxed) { return Int(syncr_readfunc_abort()) }
        switch body.read(into: buffer) {
        case .bytes(let n):
            request.bodyProgress?.update(body.position)
            return n
        case .pause: return Int(syncr_readfunc_pause())
        case .fail: return Int(syncr_readfunc_abort())
        }
    }

    /// Rewinds the body (curl does before sending it again on a new connection: a reused one
    /// that had died, a refused HTTP/2 stream).
    func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard let body, origin == SEEK_SET, body.seek(to: offset) else { return syncr_seekfunc_cantseek() }
        return syncr_seekfunc_ok()
    }

    func headerLine(_ bytes: UnsafeRawBufferPointer) {
        lastDataAt = Monotonic.nanoseconds()
        // Bytes first, text only for what is kept: every line of every answer passes here.
        if bytes.starts(with: "HTTP/".utf8) {
            // A new response begins (after a redirect or a 1xx): forget the previous one's fields.
            fields = []
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = HTTPWhitespace.trimmedText(bytes[..<colon])
        let value = HTTPWhitespace.trimmedText(bytes[(colon + 1)...])
        guard !name.isEmpty else { return }
        fields.append(.init(name: name, value: value))
    }

    private func currentHead() -> HTTPResponseHead {
        var status = 0
        syncr_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var urlPointer: UnsafeMutablePointer<CChar>? = nil
        syncr_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &urlPointer)
        let effective = urlPointer.map { String(cString: $0) } ?? request.url
        return HTTPResponseHead(status: status, fields: fields, effectiveURL: effective)
    }

    /// Called once the head is complete: at the first body byte, or at the end for bodiless answers.
    private func startBody() -> Bool {
        bodyStarted = true
        let h = currentHead()
        head = h
        if h.isSuccess {
            let decision = sink.responseStarted(h)
            if case .proceed = decision {
                sinkAccepted = true
                return true
            }
            // `.pause` is for body pieces only; a sink that answers a head with it has a bug.
            if case .pause = decision {
                assertionFailure("a sink paused at the response head")
                sinkOutcome = .fail(.invalidResponse(url: request.displayURL, message: "the sink paused before the body"))
            } else {
                sinkOutcome = decision
            }
            return false
        }
        bodyIsError = true
        return true
    }

    /// Returns the number of bytes consumed; anything else aborts the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Int {
        holdingPiece = false
        lastDataAt = Monotonic.nanoseconds()
        if !bodyStarted && !startBody() { return 0 }
        if bodyIsError {
            let room = 1024 - errorBytes.count
            if room > 0 { errorBytes.append(contentsOf: bytes.prefix(room)) }
            if errorBytes.count >= 1024 {
                // Enough to explain the failure; no need to read a large error page.
                errorBodyCapped = true
                return 0
            }
            return bytes.count
        }
        let decision = sink.write(bytes)
        switch decision {
        case .proceed:
            bodyBytes += Int64(bytes.count)
            return bytes.count
        case .pause:
            // curl keeps these bytes and offers them again after `resume`.
            holdingPiece = true
            return Int(syncr_writefunc_pause())
        case .stop, .fail:
            sinkOutcome = decision
            return 0
        }
    }

    /// Resumes a transfer its sink paused. Engine thread; curl may offer the held bytes at once,
    /// and a failure to take them is returned.
    func resume() -> CURLcode {
        syncr_easy_unpause(easy)
    }

    /// When the transfer counts as stalled if nothing moves before (`stallMilliseconds` after
    /// the last byte received or, with a body, seen sent); nil while the check does not apply:
    /// before the answer begins or the body's first byte leaves (the request may wait for a
    /// connection, and curl's limits cover connecting), or while the transfer waits for its
    /// disk (curl holds the piece the sink could not take, or the body's next bytes are not
    /// read yet: curl's limit then fails it as stuck on disk, `Transfer.stuckOnDisk`).
    /// A body's bytes sent move the clock as the engine sees them (`noteSent(now:)`).
    func stallDeadline(now: UInt64) -> UInt64? {
        guard request.stallMilliseconds > 0, !holdingPiece else { return nil }
        if let body, lastDataAt != 0, body.waitingOnDisk {
            // The wait is the disk's: the server's time starts again once the body moves.
            lastDataAt = now
            return nil
        }
        guard lastDataAt != 0 else { return nil }
        return lastDataAt + UInt64(request.stallMilliseconds) * 1_000_000
    }

    /// Looks at curl's count of body bytes sent; the engine calls it for every transfer with a
    /// body at each pass of its loop, right after curl worked the sockets. Bytes sent reach no
    /// callback of ours that tells when they left (curl asks for a body's bytes a whole upload
    /// buffer ahead), and a look once a second, with the stall check, saw a send up to a
    /// second late; a pass follows every socket curl wrote to. Costs one `curl_easy_getinfo`
    /// per upload in flight and pass, nothing per body callback.
    func noteSent(now: UInt64) {
        let sent = uploadedBytes
        guard sent != sentSeen else { return }
        sentSeen = sent
        lastDataAt = now
    }

    /// Ends a transfer in which nothing moved for `stallMilliseconds`: as `abandon`, the sink writes
    /// what it held back, and a failure to write it is the outcome instead.
    func stall() -> TransferError {
        settleBodyProgress()
        let stalled = TransferError.stalled(url: request.displayURL, milliseconds: request.stallMilliseconds, lowSpeed: nil,
                                            phase: stallPhase, origin: request.timeoutOrigin)
        defer { sinkAccepted = false }
        if sinkAccepted, case .fail(let error) = sink.finish() { return error }
        return stalled
    }

    /// What the transfer was doing when it stalled: receiving, or sending its body (all of it
    /// sent: waiting for the answer).
    private var stallPhase: StallPhase {
        guard let body else { return .receiving }
        return uploadedBytes < body.length ? .sending(path: body.path) : .awaitingAnswer(path: body.path)
    }

    /// The transfer is dropped before curl finished it (cancelled, or the engine stops): the sink
    /// still gets its `finish`, so bytes it held back reach the file and the caller's checkpoint
    /// after the cancellation can keep them.
    func abandon() {
        settleBodyProgress()
        if sinkAccepted { _ = sink.finish() }
        sinkAccepted = false
    }

    /// Turns curl's result into the transfer's outcome; a body that did not go whole to a
    /// server that took it counts what is known to have reached it (`settleBodyProgress`).
    func finish(code: CURLcode) -> Result<HTTPResponse, TransferError> {
        let result = result(code: code)
        if case .success(let response) = result, (200..<400).contains(response.head.status) { return result }
        settleBodyProgress()
        return result
    }

    /// What a body's progress (`HTTPRequest.bodyProgress`) counts once its attempt failed: the
    /// bytes the peer's TCP acknowledged (the server's, or a proxy's between; under TLS, bytes
    /// of ciphertext: it errs low) where the connection is still there to ask (curl's
    /// count of bytes written to it, less those its socket holds unacknowledged), else those
    /// curl wrote to it; never more than curl was handed. Bytes handed to curl, or written into
    /// the socket's buffers (several MiB on a fast path), never reached a server that stopped
    /// reading. Estimates low: unacknowledged request headers are taken from the body's count.
    private func settleBodyProgress() {
        guard body != nil, let progress = request.bodyProgress else { return }
        progress.update(min(progress.sent, acknowledgedBytes ?? uploadedBytes))
    }

    /// Body bytes of this attempt the peer's TCP acknowledged; nil where its connection is
    /// not known (one curl reused, made for an earlier request) or already closed.
    private var acknowledgedBytes: Int64? {
        guard let socket = connectionSocket else { return nil }
        let pending = syncr_socket_unacknowledged(socket)
        guard pending >= 0 else { return nil }
        return max(0, uploadedBytes - Int64(pending))
    }

    /// The socket of the transfer's connection, of those curl made for it (`sockets`): the
    /// one whose local port is the connection's. curl 7.88 names a transfer's socket only
    /// once it ended (`CURLINFO_ACTIVESOCKET` is -1 before); the port check keeps a number
    /// that curl closed and the process gave to another file from being taken for it.
    private var connectionSocket: Int32? {
        var port = 0
        syncr_easy_getinfo_long(easy, CURLINFO_LOCAL_PORT, &port)
        guard port != 0 else { return nil }
        return sockets.last { Self.localPort(of: $0) == port }
    }

    /// The local port a socket is bound to, nil for one that is not a bound IP socket.
    private static func localPort(of socket: Int32) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) == 0 }
        }
        guard named else { return nil }
        return withUnsafePointer(to: &address) { pointer -> Int? in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET: return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: return nil
            }
        }
    }

    /// curl made `socket` for this transfer (engine thread).
    func madeSocket(_ socket: Int32) {
        sockets.append(socket)
    }

    private func result(code: CURLcode) -> Result<HTTPResponse, TransferError> {
        let stuckOnDisk = code == CURLE_OPERATION_TIMEDOUT && body?.waitingOnDisk == true
        body?.close()
        if sinkAccepted, case .fail(let error) = sink.finish() {
            // The bytes held back could not be written (a full disk): that is the outcome.
            if case .fail? = sinkOutcome {} else { sinkOutcome = .fail(error) }
        }
        if cancelRequested.load(ordering: .relaxed) { return .failure(.cancelled) }
        if code != CURLE_OK, let failure = body?.failure { return .failure(failure) }
        if stuckOnDisk, let body { return .failure(Self.stuckOnDisk(body, seconds: request.lowSpeedTimeSeconds)) }
        if code == CURLE_OK && !bodyStarted { _ = startBody() }
        if code == CURLE_OK && holdingPiece {
            return .failure(.connection(url: request.displayURL, code: -1,
                                        message: "the transfer ended with received bytes still held back"))
        }
        switch sinkOutcome {
        case .fail(let error)?: return .failure(error)
        case .stop?: return .success(response(stopped: true))
        case .proceed?, .pause?, nil: break  // `.pause` is never stored (see `startBody`)
        }
        if bodyIsError && (code == CURLE_OK || (code == CURLE_WRITE_ERROR && errorBodyCapped)) {
            if head?.status == 407 { return .failure(proxyAuthenticationRequired(body: HTTPResponse.errorText(errorBytes))) }
            return .success(response(stopped: false))
        }
        guard code == CURLE_OK else { return .failure(error(for: code)) }
        if let cut = bodyCutShort() { return .failure(cut) }
        return .success(response(stopped: false))
    }

    /// A success answered before the request's body was sent whole (a server that replies as
    /// soon as it has the headers, a proxy that gives up on the body): the server cannot have
    /// taken the upload, whatever its status says, and it must not be recorded as sent.
    private func bodyCutShort() -> TransferError? {
        guard let body, let status = head?.status, (200..<300).contains(status) else { return nil }
        let sent = uploadedBytes
        guard sent < body.length else { return nil }
        return .invalidResponse(url: request.displayURL,
                                message: "the server answered HTTP \(status) after \(sent) of the body's \(body.length) bytes, so it cannot have taken the upload; nothing was recorded as sent")
    }

    private func response(stopped: Bool) -> HTTPResponse {
        var response = HTTPResponse(head: head ?? currentHead(), bodyBytes: bodyBytes, stoppedEarly: stopped,
                                    errorBody: HTTPResponse.errorText(errorBytes), uploadedBytes: uploadedBytes)
        response.redirectTarget = redirectTarget
        response.proxy = route?.forwarder(scheme: effectiveParts?.scheme ?? "")
        return response
    }

    /// Where a 3xx answer points, resolved against the request's URL (nil without `Location`).
    private var redirectTarget: String? {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        guard syncr_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
    }

    /// `host:port` of the server this transfer talked to, for TLS messages (after a redirect it
    /// is not the manifest URL's host).
    private var peer: String {
        guard let parts = effectiveParts else { return "the server" }
        return "\(parts.host):\(parts.port)"
    }

    /// The URL last asked for (after redirects), in parts.
    var effectiveParts: URLParts? {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        syncr_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &pointer)
        return URLParts(pointer.map { String(cString: $0) } ?? request.url)
    }

    /// curl's message (`detail`, for `code`), with the proxy named when the request went
    /// through one (`route`): every connection curl opens for it is then to the proxy, so a
    /// refused connection (`CURLE_COULDNT_CONNECT`), or a timeout before one was made, is the
    /// proxy's, whatever curl's words name. A timeout after the proxy took the connection is
    /// its tunnel, SOCKS handshake or answer that did not come. The server's own connection
    /// failures come through a proxy otherwise: a SOCKS proxy's reply (`CURLE_PROXY`), an
    /// HTTP proxy's answer to the CONNECT or to the request.
    private func namingProxy(_ detail: String, code: CURLcode) -> String {
        guard let proxy = route?.proxy else { return detail }
        guard code == CURLE_OPERATION_TIMEDOUT, connected else { return detail + "; " + proxy.unreachableHint }
        return detail + "; " + proxy.unansweredHint(target: targetAddress)
    }

    /// Whether curl's connection (to the server, or to the proxy) was made: curl 7.88 sets its
    /// local port once the TCP connection is up, and its connect time only once a proxy's
    /// handshake is done too, so only the port tells a proxy that took the connection.
    private var connected: Bool {
        var port = 0
        syncr_easy_getinfo_long(easy, CURLINFO_LOCAL_PORT, &port)
        return port != 0
    }

    /// Request body bytes curl has sent so far.
    var uploadedBytes: Int64 {
        var sent: curl_off_t = 0
        syncr_easy_getinfo_off(easy, CURLINFO_SIZE_UPLOAD_T, &sent)
        return Int64(sent)
    }

    /// Whether any part of the request may have reached the server, for the rule that a POST
    /// is retried only when it certainly did not.
    ///
    /// True as soon as curl has written request bytes to a socket (`CURLINFO_REQUEST_SIZE`, the
    /// headers; `CURLINFO_SIZE_UPLOAD_T`, the body) or has taken body bytes from us that it may
    /// have sent. A failure to resolve or connect without any earlier request (a redirect) is
    /// false. Errs towards true: a wrong true costs a retry, a wrong false could apply a POST twice.
    func requestSent(code: CURLcode?) -> Bool {
        var requestSize = 0
        syncr_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestSize)
        if requestSize > 0 || uploadedBytes > 0 { return true }
        if let code, code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY
            || code == CURLE_COULDNT_CONNECT {
            return false
        }
        return (body?.delivered ?? 0) > 0
    }

    /// The body's disk gave no bytes for the whole low-speed time: its fault, not the server's,
    /// and not worth a retry that would wait on the same disk.
    private static func stuckOnDisk(_ body: ReadAhead, seconds: Int) -> TransferError {
        .local(path: body.path, errno: ETIMEDOUT, message: "cannot read: the disk gave no bytes of the upload for "
            + "\(seconds) s (the entry's timeout); check the disk or network mount it is on")
    }

    private func error(for code: CURLcode) -> TransferError {
        let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        let url = request.displayURL
        if let proxyFailure = proxyFailure(code, detail: detail) { return proxyFailure }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            // After the request went out only the low-speed limit times a transfer out (the
            // connect timeout is over): said in the request's terms, not curl's averaged speed.
            // Without a body byte (a head that came alone counts none) it was no data at all;
            // an upload's floor is 1 byte a second, which is no data too.
            if request.stallMilliseconds > 0, requestSent(code: code) {
                return .stalled(url: url, milliseconds: request.stallMilliseconds,
                                lowSpeed: bodyBytes == 0 || request.lowSpeedLimit <= 1 ? nil : request.lowSpeedLimit,
                                phase: stallPhase, origin: request.timeoutOrigin)
            }
            return .timedOut(url: url, message: namingProxy(detail, code: code))
        case CURLE_COULDNT_CONNECT:
            return .connection(url: url, code: Int(code.rawValue), message: namingProxy(detail, code: code))
        case CURLE_PEER_FAILED_VERIFICATION:
            return .tls(url: url, message: "cannot verify the certificate of \(peer): \(detail); "
                + CertificateAdvice.advice(for: detail))
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls(url: url, message: "with \(peer): \(detail)")
        case CURLE_TOO_MANY_REDIRECTS, CURLE_UNSUPPORTED_PROTOCOL:
            return .redirect(url: url, message: detail)
        case CURLE_URL_MALFORMAT:
            return .invalidResponse(url: url, message: detail)
        case CURLE_READ_ERROR where request.netrc && !requestSent(code: code):
            // curl reads the netrc file as it sets the connection up, and fails so, saying
            // ".netrc parser error", when it cannot parse it: nothing was sent. (A body's read
            // failure aborts the transfer from its callback instead: CURLE_ABORTED_BY_CALLBACK.)
            return .unreadableNetrc(url: url, file: request.netrcFile, message: detail)
        default:
            return .connection(url: url, code: Int(code.rawValue), message: detail)
        }
    }
}

private let transferHeaderCallback: syncr_data_callback = { pointer, size, count, user in
    guard let pointer, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    transfer.headerLine(UnsafeRawBufferPointer(start: pointer, count: length))
    return length
}

private let transferReadCallback: syncr_data_callback = { pointer, size, count, user in
    guard let pointer, let user else { return syncr_readfunc_abort() }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    let n = transfer.readBody(UnsafeMutableRawBufferPointer(start: pointer, count: size * count))
    return size_t(n)
}

private let transferSeekCallback: syncr_seek_callback = { user, offset, origin in
    guard let user else { return syncr_seekfunc_cantseek() }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.seekBody(to: Int64(offset), origin: origin)
}

private let transferSockoptCallback: syncr_sockopt_callback = { user, socket, _ in
    if let user { Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().madeSocket(socket) }
    return 0  // CURL_SOCKOPT_OK
}

private let transferWriteCallback: syncr_data_callback = { pointer, size, count, user in
    guard let pointer, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    if length == 0 { return 0 }
    return transfer.body(UnsafeRawBufferPointer(start: pointer, count: length))
}

/// A clock that never goes back, for the engine's stall checks.
enum Monotonic {
    static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// Facts about this build of the HTTP layer.
public enum SyncrHTTPInfo {
    /// syncr's version, sent in the default `User-Agent`.
    public static let version = "0.1.0"
    /// The libcurl version string syncr runs with.
    public static var curlVersion: String { String(cString: curl_version()) }
}
