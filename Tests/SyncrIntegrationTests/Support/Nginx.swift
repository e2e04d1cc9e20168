#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A real nginx serving a folder on 127.0.0.1, for downloads against a server that does
/// everything right: ETag, Last-Modified, Accept-Ranges and ranges are nginx's defaults.
///
/// Each instance has its own config, logs and temp folders in a private temp dir, listens
/// on a free port, and is killed by `stop()` or `deinit`, so tests can run in parallel.
///
/// Locations:
/// - `/`        static files from `root`, `sendfile on`.
/// - `/upload/` WebDAV PUT/DELETE/MKCOL into `uploadDirectory` (files read back with GET).
/// - `/slow/`   the same files as `/`, throttled to `Options.slowRate` bytes/s per request
///              (only when `slowRate` is set).
final class Nginx: Sendable {
    /// How to configure the server.
    struct Options: Sendable {
        /// `limit_rate` in bytes/s for `/slow/` (nil: no `/slow/` location).
        var slowRate: Int? = nil
        /// `limit_rate` in bytes/s for every location (nil: unthrottled).
        var limitRate: Int? = nil
        /// Directives added verbatim inside `server { }`, for one-off needs.
        var extraServerDirectives: String = ""
        /// Serve https with this certificate chain and key (PEM files) instead of http.
        var tls: TLSFiles? = nil
        /// Offer HTTP/2 as well as HTTP/1.1 (ALPN, so only with `tls`), as most https servers do.
        var http2 = false
    }

    /// A server certificate (chain) and its private key, PEM.
    struct TLSFiles: Sendable {
        var certificate: URL
        var key: URL
    }

    /// One line of the access log.
    struct AccessLogEntry: Decodable, Sendable, Equatable {
        /// `GET`, `HEAD`, `PUT`, ...
        var method: String
        /// The request target as sent, with any query.
        var uri: String
        /// The response status.
        var status: Int
        /// Response body bytes sent to the client (nginx `$body_bytes_sent`).
        var bodyBytesSent: Int
        /// All bytes sent, headers included (`$bytes_sent`).
        var bytesSent: Int
        /// The `Range` request header, nil when absent.
        var range: String?
        /// The `If-Range` request header, nil when absent.
        var ifRange: String?
        /// The connection serial number: equal for requests that reused a connection.
        var connection: Int
        /// The request's position on its connection, from 1.
        var connectionRequests: Int
        /// Whether nginx finished sending the response (false when the client went away).
        var completed: Bool
        /// `HTTP/1.1` or `HTTP/2.0` (nginx `$server_protocol`).
        var serverProtocol: String

        /// `uri` without its query.
        var path: String { String(uri.prefix { $0 != "?" }) }

        private enum CodingKeys: String, CodingKey {
            case method, uri, status, range, connection
            case bodyBytesSent = "body_bytes_sent", bytesSent = "bytes_sent"
            case ifRange = "if_range", connectionRequests = "connection_requests"
            case completed = "request_completion"
            case serverProtocol = "protocol"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            method = try c.decode(String.self, forKey: .method)
            uri = try c.decode(String.self, forKey: .uri)
            status = try c.decode(Int.self, forKey: .status)
            bodyBytesSent = try c.decode(Int.self, forKey: .bodyBytesSent)
            bytesSent = try c.decode(Int.self, forKey: .bytesSent)
            // nginx logs an absent header as an empty string.
            range = try c.decode(String.self, forKey: .range).nilIfEmpty
            ifRange = try c.decode(String.self, forKey: .ifRange).nilIfEmpty
            connection = try c.decode(Int.self, forKey: .connection)
            connectionRequests = try c.decode(Int.self, forKey: .connectionRequests)
            completed = try c.decode(String.self, forKey: .completed) == "OK"
            serverProtocol = try c.decode(String.self, forKey: .serverProtocol)
        }
    }

    /// Errors from starting nginx or reading its log.
    enum Failure: Error, CustomStringConvertible {
        case didNotStart(errorLog: String)
        case badLogLine(line: String, error: String)
        case logTimeout(wanted: Int, got: Int)

        var description: String {
            switch self {
            case .didNotStart(let errorLog):
                return "nginx did not start; error log:\n\(errorLog)"
            case .badLogLine(let line, let error):
                return "nginx access log: cannot parse \(line): \(error)"
            case .logTimeout(let wanted, let got):
                return "nginx access log: waited for \(wanted) entries, found \(got)"
            }
        }
    }

    /// `http://127.0.0.1:PORT` (`https://` with `Options.tls`), no trailing slash.
    let baseURL: String
    /// The port nginx listens on.
    let port: UInt16
    /// The folder served at `/`.
    let root: URL
    /// Where `PUT /upload/x` stores `x`.
    let uploadDirectory: URL
    /// nginx's private folder: config, pid, logs, temp files.
    let directory: TemporaryDirectory
    /// The access log (one JSON object per line).
    let accessLogFile: URL
    /// The error log.
    let errorLogFile: URL
    private let child: ChildProcess

    /// `baseURL` + `path` (`path` starts with `/`).
    func url(_ path: String) -> String { baseURL + path }

    /// The process group of the server and its watchdog (the watchdog's PID).
    var processGroup: Int32 { child.pid }

    private init(port: UInt16, root: URL, directory: TemporaryDirectory, child: ChildProcess, tls: Bool = false) {
        self.port = port
        self.baseURL = "\(tls ? "https" : "http")://127.0.0.1:\(port)"
        self.root = root
        self.directory = directory
        self.uploadDirectory = directory.appending("dav/upload")
        self.accessLogFile = directory.appending("access.log")
        self.errorLogFile = directory.appending("error.log")
        self.child = child
    }

    /// Starts nginx serving `root` and returns once it accepts connections.
    /// - Throws: `Failure.didNotStart` with the error log when nginx cannot start.
    static func start(root: URL, options: Options = Options()) async throws -> Nginx {
        let nginx = try resolveNginx()
        let directory = try TemporaryDirectory(prefix: "nginx")
        for name in ["dav/upload", "client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            try directory.makeDirectory(name)
        }
        let configFile = directory.appending("nginx.conf")
        let errorLog = directory.appending("error.log")
        var lastLog = ""
        // The free port can be taken between freePort() and nginx's bind: retry then.
        for _ in 0..<5 {
            let port = try freePort()
            try config(port: port, root: root, directory: directory.url, options: options)
                .write(to: configFile, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(at: errorLog)
            let pidFile = directory.appending("nginx.pid").path
            try? FileManager.default.removeItem(atPath: pidFile)
            let child = try launchServer { process in
                process.executableURL = URL(fileURLWithPath: nginx)
                process.arguments = ["-p", directory.path + "/", "-c", configFile.path, "-e", errorLog.path]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
            }
            let server = Nginx(port: port, root: root, directory: directory, child: child, tls: options.tls != nil)
            // nginx writes its pid file once it holds its sockets: accepting alone was not enough,
            // as another test's server (one that binds port 0) could take the port between
            // freePort() and nginx's bind, and then answered the test (a 404 "Error response"
            // from Python's http.server to an upload, in a full run under AddressSanitizer).
            let up = await poll(timeout: .seconds(30)) {
                (FileManager.default.fileExists(atPath: pidFile) && isAccepting(port: port)) || !child.isRunning
            }
            if up && child.isRunning {
                return server
            }
            server.stop()
            lastLog = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            if !lastLog.contains("Address already in use") { break }
        }
        throw Failure.didNotStart(errorLog: lastLog)
    }

    /// Stops nginx (SIGTERM, then SIGKILL after 5 s). Safe to call twice; the logs stay
    /// readable until this object goes away, which removes its folder.
    func stop() {
        child.terminate()
    }

    deinit {
        child.terminate()
    }

    /// The access log entries written so far, oldest first.
    ///
    /// nginx logs a request after the response is sent, so a client can finish before its
    /// entry appears: use `accessLog(atLeast:)` to wait for entries.
    func accessLog() throws -> [AccessLogEntry] {
        guard let data = FileManager.default.contents(atPath: accessLogFile.path) else { return [] }
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            do {
                return try decoder.decode(AccessLogEntry.self, from: Data(line))
            } catch {
                throw Failure.badLogLine(line: String(decoding: line, as: UTF8.self), error: "\(error)")
            }
        }
    }

    /// The access log once it has at least `count` entries (polls; no fixed sleep).
    func accessLog(atLeast count: Int, timeout: Duration = .seconds(10)) async throws -> [AccessLogEntry] {
        var entries: [AccessLogEntry] = []
        _ = try await poll(timeout: timeout) {
            entries = try accessLog()
            return entries.count >= count
        }
        guard entries.count >= count else { throw Failure.logTimeout(wanted: count, got: entries.count) }
        return entries
    }

    /// The error log's text, for diagnostics.
    func errorLog() -> String {
        (try? String(contentsOf: errorLogFile, encoding: .utf8)) ?? ""
    }

    private static func resolveNginx() throws -> String {
        if let path = ProcessInfo.processInfo.environment["NGINX_BIN"], !path.isEmpty { return path }
        for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return try resolveExecutable("nginx")
    }

    private static func config(port: UInt16, root: URL, directory: URL, options: Options) -> String {
        let dir = directory.path
        let rootPath = root.standardizedFileURL.path
        let slow = options.slowRate.map { rate in
            """
                    location /slow/ {
                        alias \(rootPath)/;
                        limit_rate \(rate);
                    }
            """
        } ?? ""
        let limit = options.limitRate.map { "        limit_rate \($0);" } ?? ""
        // nginx 1.22 (Debian 12) enables HTTP/2 on the listen line; `http2 on;` came in 1.25.1.
        let http2 = options.http2 ? " http2" : ""
        let listen = options.tls.map { files in
            """
            listen 127.0.0.1:\(port) ssl\(http2);
                    ssl_certificate \(files.certificate.path);
                    ssl_certificate_key \(files.key.path);
            """
        } ?? "listen 127.0.0.1:\(port);"
        // master_process off: a single process, so SIGKILL leaves no orphaned worker, and
        // no `user` switch: as root it reads files in root-owned 0700 temp dirs.
        return """
            daemon off;
            master_process off;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log info;
            events {
                worker_connections 1024;
            }
            http {
                default_type application/octet-stream;
                sendfile on;
                tcp_nopush on;
                keepalive_timeout 65;
                keepalive_requests 100000;
                client_body_temp_path \(dir)/client_body;
                proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi;
                scgi_temp_path \(dir)/scgi;
                log_format syncr escape=json '{"method":"$request_method","uri":"$request_uri",'
                    '"status":$status,"body_bytes_sent":$body_bytes_sent,"bytes_sent":$bytes_sent,'
                    '"range":"$http_range","if_range":"$http_if_range","connection":$connection,'
                    '"connection_requests":$connection_requests,'
                    '"request_completion":"$request_completion","protocol":"$server_protocol"}';
                access_log \(dir)/access.log syncr;
                server {
                    \(listen)
                    server_name localhost;
                    root \(rootPath);
            \(limit)
                    location / {
                    }
                    location /upload/ {
                        root \(dir)/dav;
                        dav_methods PUT DELETE MKCOL;
                        create_full_put_path on;
                        client_max_body_size 0;
                        dav_access user:rw group:r all:r;
                    }
            \(slow)
            \(options.extraServerDirectives)
                }
            }

            """
    }
}

extension Array where Element == Nginx.AccessLogEntry {
    /// The entries whose path (query removed) is `path`.
    func to(_ path: String) -> [Element] { filter { $0.path == path } }

    /// The body bytes sent over all these entries.
    var totalBodyBytes: Int { reduce(0) { $0 + $1.bodyBytesSent } }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
