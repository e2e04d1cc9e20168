import CCurl
import Synchronization

/// One request in flight: owns its curl easy handle and the state its callbacks fill in.
///
/// `@unchecked Sendable`: after `submit`, every mutable field is touched only by the engine
/// thread (the curl callbacks run there); the submitting task reads the result only through the
/// continuation, which the engine resumes after its last access. `cancelRequested` is atomic.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let sink: ResponseSink
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var continuation: CheckedContinuation<Result<HTTPResponse, TransferError>, Never>?
    let cancelRequested = Atomic<Bool>(false)

    // Filled by callbacks on the engine thread.
    private var fields: [HTTPResponseHead.HeaderField] = []
    private var head: HTTPResponseHead?
    private var bodyStarted = false
    private var bodyIsError = false
    private var errorBytes: [UInt8] = []
    private(set) var bodyBytes: Int64 = 0
    private(set) var sinkOutcome: SinkDecision?
    private var errorBodyCapped = false

    init?(request: HTTPRequest, sink: ResponseSink, bufferSize: Int) {
        guard let easy = curl_easy_init() else { return nil }
        self.request = request
        self.sink = sink
        self.easy = easy
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure(bufferSize: bufferSize)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func configure(bufferSize: Int) {
        let h = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        syncr_easy_setopt_string(h, CURLOPT_URL, request.url)
        syncr_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        syncr_easy_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https")
        syncr_easy_setopt_string(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        syncr_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, 1)
        syncr_easy_setopt_long(h, CURLOPT_MAXREDIRS, request.maxRedirects)
        syncr_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeoutMilliseconds)
        syncr_easy_setopt_long(h, CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedLimit)
        syncr_easy_setopt_long(h, CURLOPT_LOW_SPEED_TIME, request.lowSpeedTimeSeconds)
        syncr_easy_setopt_long(h, CURLOPT_BUFFERSIZE, bufferSize)
        syncr_easy_setopt_long(h, CURLOPT_TCP_KEEPALIVE, 1)
        syncr_easy_setopt_long(h, CURLOPT_PIPEWAIT, 1)
        syncr_easy_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorBuffer)
        syncr_easy_setopt_pointer(h, CURLOPT_PRIVATE, me)
        syncr_easy_setopt_string(h, CURLOPT_USERAGENT, "syncr/\(SyncrHTTPInfo.version)")
        switch request.method {
        case .get: syncr_easy_setopt_long(h, CURLOPT_HTTPGET, 1)
        case .head: syncr_easy_setopt_long(h, CURLOPT_NOBODY, 1)
        case .put, .post: syncr_easy_setopt_string(h, CURLOPT_CUSTOMREQUEST, request.method.rawValue)
        }
        var list: UnsafeMutablePointer<curl_slist>? = nil
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

    // MARK: callbacks (engine thread)

    func headerLine(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new response begins (after a redirect or a 1xx): forget the previous one's fields.
            fields = []
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon]).trimmed
        let value = String(line[line.index(after: colon)...]).trimmed
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
            if case .proceed = decision { return true }
            sinkOutcome = decision
            return false
        }
        bodyIsError = true
        return true
    }

    /// Returns the number of bytes consumed; anything else aborts the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Int {
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
        if case .proceed = decision {
            bodyBytes += Int64(bytes.count)
            return bytes.count
        }
        sinkOutcome = decision
        return 0
    }

    /// Turns curl's result into the transfer's outcome.
    func finish(code: CURLcode) -> Result<HTTPResponse, TransferError> {
        if cancelRequested.load(ordering: .relaxed) { return .failure(.cancelled) }
        if code == CURLE_OK && !bodyStarted { _ = startBody() }
        switch sinkOutcome {
        case .fail(let error)?: return .failure(error)
        case .stop?: return .success(response(stopped: true))
        case .proceed?, nil: break
        }
        if bodyIsError && (code == CURLE_OK || (code == CURLE_WRITE_ERROR && errorBodyCapped)) {
            return .success(response(stopped: false))
        }
        guard code == CURLE_OK else { return .failure(error(for: code)) }
        return .success(response(stopped: false))
    }

    private func response(stopped: Bool) -> HTTPResponse {
        HTTPResponse(head: head ?? currentHead(), bodyBytes: bodyBytes, stoppedEarly: stopped,
                     errorBody: HTTPResponse.printable(errorBytes))
    }

    private func error(for code: CURLcode) -> TransferError {
        let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        let url = request.displayURL
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: url, message: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls(url: url, message: detail)
        case CURLE_TOO_MANY_REDIRECTS, CURLE_UNSUPPORTED_PROTOCOL:
            return .redirect(url: url, message: detail)
        case CURLE_URL_MALFORMAT:
            return .invalidResponse(url: url, message: detail)
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

private let transferWriteCallback: syncr_data_callback = { pointer, size, count, user in
    guard let pointer, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    if length == 0 { return 0 }
    return transfer.body(UnsafeRawBufferPointer(start: pointer, count: length))
}

/// Facts about this build of the HTTP layer.
public enum SyncrHTTPInfo {
    /// syncr's version, sent in the default `User-Agent`.
    public static let version = "0.1.0"
    /// The libcurl version string syncr runs with.
    public static var curlVersion: String { String(cString: curl_version()) }
}
