import Foundation

/// How the fault server misbehaves on one path; nil fields are left at "behave normally".
///
/// Mirrors the options of `Tests/Servers/faultserver.py` (its docstring is the reference).
/// Options combine; a new behaviour for a path replaces the old one and restarts its
/// `*_times` counters.
struct FaultBehaviour: Codable, Sendable, Equatable {
    /// Which requests `status` applies to.
    enum StatusOn: String, Codable, Sendable { case all, get, head, put, post }

    /// Answer this status (with a small text body) instead of the file.
    var status: Int? = nil
    /// `Retry-After` sent with `status`: seconds ("1") or an HTTP date.
    var retryAfter: String? = nil
    /// Only the first N matching requests get `status` (nil: all of them).
    var statusTimes: Int? = nil
    /// Which methods `status` and `statusTimes` apply to (nil: every method). An upload
    /// that waits for `100 Continue` gets the status instead, and its body is never read.
    var statusOn: StatusOn? = nil
    /// The body of `status` instead of a line of text (one starting with `<` goes as XML: an
    /// object store's error document).
    var statusBody: String? = nil
    /// `user:password`: requests without that pair as Basic credentials get 401 with
    /// `WWW-Authenticate: Basic` (an injected `status` comes first).
    var requireBasic: String? = nil
    /// How the body of `status` (and of `requireBasic`'s 401) quotes the request's headers
    /// back, one `name: value` line each: a server echoing the request in an error page.
    enum Echo: String, Codable, Sendable { case asIs = "as_is", lower, upper }
    var echoHeaders: Echo? = nil
    /// HEAD alone is answered with this status (e.g. 405); GET is unaffected.
    var headStatus: Int? = nil
    /// Redirect to this path on the same server, or to this absolute http(s) URL.
    var redirectTo: String? = nil
    /// The redirect status (nil: 302).
    var redirectStatus: Int? = nil
    /// No Content-Length; GET bodies use chunked transfer coding.
    var noLength: Bool? = nil
    /// No ETag and no Last-Modified.
    var noValidators: Bool? = nil
    /// Send a weak ETag (`W/"..."`), which never matches If-Range.
    var weakEtag: Bool? = nil
    /// No Accept-Ranges, and Range is ignored.
    var noAcceptRanges: Bool? = nil
    /// Ranged GETs get 200 and the full body, though HEAD says `Accept-Ranges: bytes`.
    var ignoreRange: Bool? = nil
    /// Ranged GETs get a 206 for a range whose start is off by one.
    var wrongContentRange: Bool? = nil
    /// Close the connection after this many body bytes of a GET.
    var dropAfter: Int? = nil
    /// Only the first N GETs are dropped (nil: all of them).
    var dropTimes: Int? = nil
    /// Drop with a TCP RST instead of a FIN.
    var dropRST: Bool? = nil
    /// Pause after this many body bytes of a GET.
    var stallAfter: Int? = nil
    /// How long to pause (nil: an hour, i.e. until `release(path:)`, the client gives up,
    /// or the server stops).
    var stallSeconds: Double? = nil
    /// Only the first N GETs stall (nil: all of them).
    var stallTimes: Int? = nil
    /// Throttle GET bodies to this many bytes per second.
    var rate: Int? = nil
    /// Close the connection after reading this many bytes of a PUT or POST body (with
    /// `dropTimes`: only the first N uploads); nothing is stored.
    var dropBodyAfter: Int? = nil
    /// Stop reading a PUT or POST body after this many bytes (for `stallSeconds`, or until
    /// `release(path:)`; with `stallTimes`: only the first N uploads).
    var stallBodyAfter: Int? = nil
    /// Answer a PUT or POST with this status as soon as its headers are read, without reading
    /// the body, and close: a server that replies early (it has not taken the upload).
    var answerBeforeBody: Int? = nil
    /// Read a PUT or POST body whole (and store it), then answer nothing for `stallSeconds`
    /// or until `release(path:)` (with `stallTimes`: only the first N uploads).
    var stallAnswer: Bool? = nil

    enum CodingKeys: String, CodingKey {
        case status, rate
        case retryAfter = "retry_after", statusTimes = "status_times", statusOn = "status_on", statusBody = "status_body"
        case headStatus = "head_status", redirectTo = "redirect_to"
        case redirectStatus = "redirect_status", noLength = "no_length"
        case noValidators = "no_validators", weakEtag = "weak_etag"
        case noAcceptRanges = "no_accept_ranges", ignoreRange = "ignore_range"
        case wrongContentRange = "wrong_content_range", dropAfter = "drop_after"
        case dropTimes = "drop_times", dropRST = "drop_rst", stallAfter = "stall_after"
        case stallSeconds = "stall_seconds", stallTimes = "stall_times"
        case dropBodyAfter = "drop_body_after", stallBodyAfter = "stall_body_after"
        case answerBeforeBody = "answer_before_body", stallAnswer = "stall_answer"
        case requireBasic = "require_basic", echoHeaders = "echo_headers"
    }
}

/// Request statistics for one path (control requests are never counted).
struct FaultPathStats: Decodable, Sendable, Equatable {
    /// Requests of every method.
    var requests = 0
    var gets = 0
    var heads = 0
    var puts = 0
    var posts = 0
    /// Request body bytes read from uploads.
    var bytesReceived = 0
    /// The `Content-Length` of each upload, in order.
    var contentLengths: [Int] = []
    /// Uploads that came with `Transfer-Encoding` (refused with 411).
    var chunked = 0
    /// Body bytes handed to the kernel for this path (a failed write counts 0).
    var bytesSent = 0
    /// The `Range` headers received, in order (requests without one are not listed).
    var ranges: [String] = []
    /// The `If-Range` headers received, in order (requests without one are not listed).
    var ifRanges: [String] = []
    /// Response statuses, in order.
    var statuses: [Int] = []
    /// The most requests on this path in flight at once.
    var maxConcurrent = 0
    /// Distinct TCP connections that carried requests for this path.
    var connections = 0
    /// The headers of each request, in order: lowercased name → value.
    var headers: [[String: String]] = []

    enum CodingKeys: String, CodingKey {
        case requests, gets, heads, puts, posts, chunked, ranges, statuses, connections, headers
        case bytesSent = "bytes_sent", ifRanges = "if_ranges", maxConcurrent = "max_concurrent"
        case bytesReceived = "bytes_received", contentLengths = "content_lengths"
    }
}

/// What the fault server stored for one POST (its `<path>.<n>.json`).
struct FaultPostSummary: Decodable, Sendable, Equatable {
    struct File: Decodable, Sendable, Equatable {
        var name: String
        var filename: String
        var contentType: String?
        var size: Int
        /// Relative to `FaultServer.uploadDirectory`.
        var saved: String

        enum CodingKeys: String, CodingKey {
            case name, filename, size, saved
            case contentType = "content_type"
        }
    }

    /// The raw body's file, relative to `FaultServer.uploadDirectory`.
    var body: String
    var length: Int
    /// The form's text fields as (name, value) pairs, in order.
    var fields: [[String]]
    var files: [File]
}

/// Server-wide statistics since start or the last `reset()`.
struct FaultStats: Decodable, Sendable, Equatable {
    /// Per URL path (query removed).
    var paths: [String: FaultPathStats]
    /// The most TCP connections open at once (connections used only for control calls
    /// are not counted).
    var maxConcurrentConnections: Int
    /// TCP connections open now.
    var openConnections: Int
    /// TCP connections that carried file requests.
    var connections: Int

    /// The stats of `path`, all zero if it was never requested.
    subscript(path: String) -> FaultPathStats { paths[path] ?? FaultPathStats() }

    enum CodingKeys: String, CodingKey {
        case paths, connections
        case maxConcurrentConnections = "max_concurrent_connections"
        case openConnections = "open_connections"
    }
}

/// `Tests/Servers/faultserver.py`, running on a free port: a file server that misbehaves
/// on demand, per path, for the cases no real server produces when asked.
///
/// Control calls go through `/usr/bin/curl`, not the project's HTTP code.
final class FaultServer: Sendable {
    /// Errors from starting or controlling the server.
    enum Failure: Error, CustomStringConvertible {
        case didNotStart(log: String)
        case control(endpoint: String, exitCode: Int32, output: String)

        var description: String {
            switch self {
            case .didNotStart(let log):
                return "faultserver.py did not start; its output:\n\(log)"
            case .control(let endpoint, let exitCode, let output):
                return "faultserver \(endpoint): curl exited \(exitCode): \(output)"
            }
        }
    }

    /// `http://127.0.0.1:PORT` (`http://[::1]:PORT` on IPv6 loopback), no trailing slash.
    let baseURL: String
    /// The port it listens on.
    let port: UInt16
    /// The folder it serves.
    let root: URL
    /// Its private folder with `faultserver.log` (one line per request) and stderr.
    let directory: TemporaryDirectory
    /// Where uploads are stored: `PUT /p` as `p`; `POST /p` as `p.<n>.body`, with a form's
    /// files in `p.<n>.parts/<filename>` and a summary in `p.<n>.json` (see faultserver.py).
    var uploadDirectory: URL { directory.appending("uploads") }
    private let child: ChildProcess

    /// `baseURL` + `path` (`path` starts with `/`).
    func url(_ path: String) -> String { baseURL + path }

    /// The process group of the server and its watchdog (the watchdog's PID).
    var processGroup: Int32 { child.pid }

    private init(port: UInt16, host: String, root: URL, directory: TemporaryDirectory, child: ChildProcess) {
        self.port = port
        self.baseURL = host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
        self.root = root
        self.directory = directory
        self.child = child
    }

    /// The server script in the repository.
    static var script: URL {
        repositoryRoot().appendingPathComponent("Tests/Servers/faultserver.py")
    }

    /// Starts the server on `root` and returns once it listens, on `host` (an address:
    /// `127.0.0.1`, or `::1`).
    static func start(root: URL, host: String = "127.0.0.1") async throws -> FaultServer {
        let directory = try TemporaryDirectory(prefix: "faultserver")
        let (child, port, failure) = try await startPythonServer(script, arguments: [
            "--root", root.path, "--port", "0", "--log", directory.appending("faultserver.log").path,
            "--exit-with-parent", "--uploads", directory.appending("uploads").path, "--host", host,
        ], directory: directory)
        guard let port else { throw Failure.didNotStart(log: failure) }
        return FaultServer(port: port, host: host, root: root, directory: directory, child: child)
    }

    /// Stops the server (SIGTERM, then SIGKILL after 5 s). Safe to call twice.
    func stop() {
        child.terminate()
    }

    deinit {
        child.terminate()
    }

    /// Sets how `path` misbehaves, replacing its previous behaviour and counters.
    func behave(path: String, _ behaviour: FaultBehaviour) async throws {
        struct Request: Encodable {
            var path: String
            var behaviour: FaultBehaviour
            func encode(to encoder: any Encoder) throws {
                // One flat object: {"path": ..., <options>}.
                var container = encoder.container(keyedBy: PathKey.self)
                try container.encode(path, forKey: .path)
                try behaviour.encode(to: encoder)
            }
            enum PathKey: String, CodingKey { case path }
        }
        try await control("behave", body: JSONEncoder().encode(Request(path: path, behaviour: behaviour)))
    }

    /// Ends the stalls in progress on `path` (they go on sending the rest), so a test can
    /// hold requests open until it has seen what it needs, with no timing involved.
    func release(path: String) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["path": path])
        try await control("release", body: body)
    }

    /// Clears every behaviour and all statistics (and releases all stalls).
    func reset() async throws {
        try await control("reset", body: Data("{}".utf8))
    }

    /// Atomically replaces the file at `path` under the root with a copy of `file` (a new
    /// inode, so a new ETag even when size and mtime match).
    func put(path: String, from file: URL) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["path": path, "file": file.path])
        try await control("put", body: body)
    }

    /// The statistics since start or the last `reset()`.
    func stats() async throws -> FaultStats {
        try JSONDecoder().decode(FaultStats.self, from: try await control("stats", body: nil))
    }

    /// The stored uploads: path relative to `uploadDirectory` → size (bodies being received
    /// are not listed).
    func uploads() async throws -> [String: Int] {
        struct Listing: Decodable { var files: [String: Int] }
        return try JSONDecoder().decode(Listing.self, from: try await control("uploads", body: nil)).files
    }

    /// What the server made of POST number `n` (from 1) to `path`.
    func postSummary(path: String, number: Int = 1) throws -> FaultPostSummary {
        let file = uploadDirectory.appendingPathComponent(String(path.dropFirst()) + ".\(number).json")
        return try JSONDecoder().decode(FaultPostSummary.self, from: Data(contentsOf: file))
    }

    /// The request log so far, for diagnostics.
    func log() -> String {
        (try? String(contentsOf: directory.appending("faultserver.log"), encoding: .utf8)) ?? ""
    }

    @discardableResult
    private func control(_ endpoint: String, body: Data?) async throws -> Data {
        // -g: a URL on IPv6 loopback has brackets, which are not a glob here.
        var arguments = ["-sS", "-g", "--fail-with-body", "--max-time", "30", "--noproxy", "*"]
        if let body {
            arguments += ["-X", "POST", "-H", "Content-Type: application/json",
                          "--data-binary", String(decoding: body, as: UTF8.self)]
        }
        arguments.append(url("/_control/\(endpoint)"))
        let result = try await runProcess(executable: "/usr/bin/curl", arguments: arguments,
                                          timeout: .seconds(60))
        guard result.exitCode == 0 else {
            throw Failure.control(endpoint: endpoint, exitCode: result.exitCode,
                                  output: result.stdout + result.stderr)
        }
        return result.stdoutData
    }
}
