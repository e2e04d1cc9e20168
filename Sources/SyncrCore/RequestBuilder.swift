import SyncrHTTP
import SyncrManifest

/// Builds every request of one entry. URL, headers, credentials, TLS, netrc, redirect policy and
/// timeouts are set here and nowhere else, so every kind of request (probe, single stream,
/// piece, PUT, POST, the HEAD of an upload target) carries the same ones. A request signer (for
/// object stores) belongs in `finish`, the one step every request passes through.
struct RequestBuilder: Sendable {
    /// The entry's URL, expanded (what is sent) and as written (what is shown).
    let url: String
    let displayURL: String
    let settings: Settings
    /// For an `s3://` entry: its object and store, whose signature `finish` adds.
    let s3: S3Object?

    init(download: Download) {
        s3 = S3Object(url: download.url, settings: download.settings)
        url = s3?.url() ?? download.url.expanded
        displayURL = download.url.written
        settings = download.settings
    }

    init(upload: Upload) {
        s3 = S3Object(url: upload.url, settings: upload.settings)
        url = s3?.url() ?? upload.url.expanded
        displayURL = upload.url.written
        settings = upload.settings
    }

    /// Where the entry's requests carry credentials, for the message after a 401 or 403; none
    /// for an `s3://` entry, whose store's answers are worded with its own credentials chain.
    var credentials: CredentialSources? {
        s3 == nil ? CredentialSources(url: url, settings: settings) : nil
    }

    /// The entry's headers, values expanded.
    private var headers: [(name: String, value: String)] {
        settings.headers.map { ($0.name, $0.value.expanded) }
    }

    /// Seconds below `lowSpeedLimit` bytes per second before curl drops a transfer: `timeout`
    /// rounded up, so that curl's limit never fires before the engine's own check of a
    /// transfer that stopped dead (`stallMilliseconds`), which words it in the manifest's terms.
    private var stallSeconds: Int { max(1, (settings.timeoutMilliseconds + 999) / 1000) }

    /// Who set the entry's `timeout`, for the words of a stall: only a manifest that wrote it
    /// is named; a value other than the default that it did not write came from a program.
    private var timeoutOrigin: TimeoutOrigin {
        if settings.timeoutWritten { return .configured }
        return settings.timeoutMilliseconds == Settings.builtIn.timeoutMilliseconds ? .builtIn : .unstated
    }

    /// HEAD of the entry's URL, for `plan`: any answer at all is progress.
    func probe() -> HTTPRequest {
        finish(HTTPRequest(method: .head, url: url, displayURL: displayURL, headers: headers), lowSpeed: 1)
    }

    /// GET of the entry's URL, or of a range of it (`ifRange`: the validator the bytes already
    /// kept belong to).
    func get(range: ByteRange? = nil, ifRange: String? = nil) -> HTTPRequest {
        finish(HTTPRequest(url: url, displayURL: displayURL, headers: headers, range: range, ifRange: ifRange),
               lowSpeed: Int(settings.lowSpeed))
    }

    /// GET of one piece of a segmented download: on a connection of its own, or HTTP/2 would
    /// carry every piece over one connection and segmenting would gain nothing where the limit
    /// is per connection (TCP windows on long paths, per-connection throttling).
    func piece(range: ByteRange, ifRange: String) -> HTTPRequest {
        var request = get(range: range, ifRange: ifRange)
        request.ownConnection = true
        return request
    }

    /// HEAD of one target of an upload (a file of a folder PUT has its own URL).
    func head(url: String, displayURL: String) -> HTTPRequest {
        finish(HTTPRequest(method: .head, url: url, displayURL: displayURL, headers: headers), lowSpeed: nil)
    }

    /// GET of the first byte of one target of an upload: what an object store refused a HEAD
    /// for, in the XML error a HEAD answer has no body for.
    func firstByte(url: String, displayURL: String) -> HTTPRequest {
        finish(HTTPRequest(url: url, displayURL: displayURL, headers: headers, range: ByteRange(start: 0, end: 0)), lowSpeed: nil)
    }

    /// A PUT of one file, or a POST of a multipart form, to `url`; `extraHeaders` are the
    /// request's own (an object store's checksums and metadata).
    func upload(_ body: RequestBody, url: String, displayURL: String, contentType: String? = nil,
                extraHeaders: [(name: String, value: String)] = []) -> HTTPRequest {
        var headers = self.headers + extraHeaders
        if let contentType { headers.append(("Content-Type", contentType)) }
        return finish(HTTPRequest.upload(body, url: url, displayURL: displayURL, headers: headers), lowSpeed: nil)
    }

    /// What every request gets: the entry's trust, redirect and credential settings, and its
    /// timeouts; for an `s3://` entry, last, its SigV4 signature (over the headers set before).
    /// `lowSpeed` nil keeps the request kind's own floor.
    func finish(_ request: HTTPRequest, lowSpeed: Int?) -> HTTPRequest {
        var request = request.using(settings)
        request.connectTimeoutMilliseconds = settings.timeoutMilliseconds
        request.lowSpeedTimeSeconds = stallSeconds
        // A request body too: nothing sent and nothing received is a stall as well.
        request.stallMilliseconds = settings.timeoutMilliseconds
        request.timeoutOrigin = timeoutOrigin
        if let lowSpeed { request.lowSpeedLimit = lowSpeed }
        if let s3 { request = s3.sign(request) }
        return request
    }
}
