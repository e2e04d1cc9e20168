import Foundation

/// `Tests/Servers/throttleproxy.py` in front of a local server: a TCP proxy that gives each
/// connection a bandwidth cap and added latency, as on the internet, and counts connections.
///
/// It forwards bytes untouched, so TLS and HTTP/2 go through it end to end (the server's
/// certificate for 127.0.0.1 still matches). Clients connect to `port` instead of the server's.
final class ThrottleProxy: Sendable {
    /// Errors from starting the proxy or reading its counts.
    enum Failure: Error, CustomStringConvertible {
        case didNotStart(log: String)
        case badStats(text: String)

        var description: String {
            switch self {
            case .didNotStart(let log): return "throttleproxy.py did not start; its output:\n\(log)"
            case .badStats(let text): return "throttleproxy.py stats: cannot parse \(text)"
            }
        }
    }

    /// What the proxy has seen since it started.
    struct Stats: Decodable, Sendable, Equatable {
        /// Connections accepted (each forwarded on a connection of its own to the server).
        var accepted: Int
        /// Connections open now.
        var open: Int
        /// The most connections open at once. A connection counts as closed as soon as either
        /// side closes it, and closes are handled before new connections, so a client that
        /// replaces a connection is never counted with both open.
        var maxOpen: Int

        enum CodingKeys: String, CodingKey {
            case accepted, open
            case maxOpen = "max_open"
        }
    }

    /// The port clients connect to.
    let port: UInt16
    /// Its private folder, with the stats file and stderr.
    let directory: TemporaryDirectory
    private let statsFile: URL
    private let child: ChildProcess

    /// The script in the repository.
    static var script: URL {
        repositoryRoot().appendingPathComponent("Tests/Servers/throttleproxy.py")
    }

    private init(port: UInt16, directory: TemporaryDirectory, statsFile: URL, child: ChildProcess) {
        self.port = port
        self.directory = directory
        self.statsFile = statsFile
        self.child = child
    }

    /// `url` (a server's URL on 127.0.0.1) with its port replaced by the proxy's.
    func url(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return url }
        parts.port = Int(port)
        return parts.string ?? url
    }

    /// Starts the proxy in front of `targetPort` on 127.0.0.1 and returns once it listens.
    /// - Parameters:
    ///   - rate: bytes per second for each direction of each connection (0: no cap).
    ///   - latencyMilliseconds: added to each direction (the round trip grows by twice this).
    static func start(targetPort: UInt16, rate: Int = 0, latencyMilliseconds: Int = 0) async throws -> ThrottleProxy {
        let directory = try TemporaryDirectory(prefix: "throttleproxy")
        let statsFile = directory.appending("stats.json")
        let (child, port, failure) = try await startPythonServer(script, arguments: [
            "--target-port", String(targetPort), "--port", "0", "--rate", String(rate),
            "--latency", String(latencyMilliseconds), "--stats", statsFile.path, "--exit-with-parent",
        ], directory: directory)
        guard let port else { throw Failure.didNotStart(log: failure) }
        return ThrottleProxy(port: port, directory: directory, statsFile: statsFile, child: child)
    }

    /// The counts so far.
    func stats() throws -> Stats {
        let data = try Data(contentsOf: statsFile)
        do {
            return try JSONDecoder().decode(Stats.self, from: data)
        } catch {
            throw Failure.badStats(text: String(decoding: data, as: UTF8.self))
        }
    }

    /// Stops the proxy (SIGTERM, then SIGKILL after 5 s). Safe to call twice.
    func stop() {
        child.terminate()
    }

    deinit {
        child.terminate()
    }
}
