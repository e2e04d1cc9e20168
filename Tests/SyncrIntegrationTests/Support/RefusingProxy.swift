import Foundation

/// `Tests/Servers/refusingproxy.py` on 127.0.0.1: an HTTP proxy that answers every request, a
/// CONNECT or a plain-http one, with one status (407 asking for credentials, or 403 refusing)
/// and forwards nothing; or a SOCKS5 proxy whose every handshake fails one way. It logs every
/// request (line), so a test counts how often syncr asked.
final class RefusingProxy: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case didNotStart(log: String)
        var description: String {
            switch self {
            case .didNotStart(let log): return "refusingproxy.py did not start; its output:\n\(log)"
            }
        }
    }

    let port: UInt16
    /// `http`, or `socks5` for a SOCKS5 proxy.
    let scheme: String
    let directory: TemporaryDirectory
    private let logFile: URL
    private let child: ChildProcess

    /// `http://127.0.0.1:PORT` (`socks5://` for a SOCKS5 one), what `http_proxy`,
    /// `https_proxy` or `all_proxy` is set to.
    var url: String { "\(scheme)://127.0.0.1:\(port)" }

    static var script: URL {
        repositoryRoot().appendingPathComponent("Tests/Servers/refusingproxy.py")
    }

    private init(port: UInt16, scheme: String, directory: TemporaryDirectory, logFile: URL, child: ChildProcess) {
        self.port = port
        self.scheme = scheme
        self.directory = directory
        self.logFile = logFile
        self.child = child
    }

    /// How a SOCKS5 proxy fails every handshake (`refusingproxy.py --socks5`).
    enum Socks5Refusal: String, Sendable {
        /// It asks for a user name and password and takes none.
        case auth
        /// Its rules refuse every server (reply 2).
        case notAllowed = "not-allowed"
        /// It says the server refused the connection (reply 5).
        case refused
    }

    /// Starts a proxy that answers every request with `status` and returns once it listens.
    static func start(status: Int) async throws -> RefusingProxy {
        try await start(["--status", String(status)])
    }

    /// Starts a SOCKS5 proxy whose every handshake fails as `refusal` says. Its `url` is then
    /// `socks5://127.0.0.1:PORT`.
    static func start(socks5 refusal: Socks5Refusal) async throws -> RefusingProxy {
        try await start(["--socks5", refusal.rawValue], scheme: "socks5")
    }

    private static func start(_ kind: [String], scheme: String = "http") async throws -> RefusingProxy {
        let directory = try TemporaryDirectory(prefix: "refusingproxy")
        let logFile = directory.appending("requests.log")
        let (child, port, failure) = try await startPythonServer(script, arguments: kind + [
            "--log", logFile.path, "--port", "0", "--exit-with-parent",
        ], directory: directory)
        guard let port else { throw Failure.didNotStart(log: failure) }
        return RefusingProxy(port: port, scheme: scheme, directory: directory, logFile: logFile, child: child)
    }

    /// The request lines it was sent, in order (`CONNECT 127.0.0.1:443 HTTP/1.1`).
    func requests() -> [String] {
        ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops the proxy (SIGTERM, then SIGKILL). Safe to call twice.
    func stop() { child.terminate() }

    deinit { child.terminate() }
}
