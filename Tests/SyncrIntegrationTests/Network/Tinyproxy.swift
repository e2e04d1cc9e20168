import Foundation

/// A real HTTP proxy (Debian's `tinyproxy`) on 127.0.0.1, for the `http_proxy` tests.
///
/// It adds a `Via: 1.1 <host> (tinyproxy/...)` header to what it forwards, which is how a test
/// tells at the server that a request came through it.
final class Tinyproxy: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case didNotStart(log: String)
        var description: String {
            switch self {
            case .didNotStart(let log): return "tinyproxy did not start; its output:\n\(log)"
            }
        }
    }

    let port: UInt16
    let directory: TemporaryDirectory
    private let child: ChildProcess

    /// `http://127.0.0.1:PORT`, what `http_proxy` is set to.
    var url: String { "http://127.0.0.1:\(port)" }

    private init(port: UInt16, directory: TemporaryDirectory, child: ChildProcess) {
        self.port = port
        self.directory = directory
        self.child = child
    }

    static func start() async throws -> Tinyproxy {
        let executable = try resolveExecutable("tinyproxy")
        let directory = try TemporaryDirectory(prefix: "tinyproxy")
        var output = ""
        // The free port can be taken between freePort() and tinyproxy's bind: retry then.
        for _ in 0..<5 {
            let port = try freePort()
            let config = """
                Port \(port)
                Listen 127.0.0.1
                Allow 127.0.0.1
                Timeout 60
                MaxClients 64
                LogFile "\(directory.appending("tinyproxy.log").path)"
                LogLevel Info
                DisableViaHeader No

                """
            try config.write(to: directory.appending("tinyproxy.conf"), atomically: true, encoding: .utf8)
            let outputFile = directory.appending("output.log")
            _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
            let child = try launchServer { process in
                process.executableURL = URL(fileURLWithPath: executable)
                // -d: stay in the foreground, so the process we started is the proxy.
                process.arguments = ["-d", "-c", directory.appending("tinyproxy.conf").path]
                process.standardOutput = try FileHandle(forWritingTo: outputFile)
                process.standardError = try FileHandle(forWritingTo: outputFile)
            }
            let proxy = Tinyproxy(port: port, directory: directory, child: child)
            if await poll(timeout: .seconds(15), { isAccepting(port: port) || !child.isRunning }), child.isRunning {
                return proxy
            }
            proxy.stop()
            output = ((try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
                + ((try? String(contentsOf: directory.appending("tinyproxy.log"), encoding: .utf8)) ?? "")
        }
        throw Failure.didNotStart(log: output)
    }

    /// Stops the proxy (SIGTERM, then SIGKILL). Safe to call twice.
    func stop() { child.terminate() }

    deinit { child.terminate() }

    /// Its log, for diagnostics.
    func log() -> String {
        (try? String(contentsOf: directory.appending("tinyproxy.log"), encoding: .utf8)) ?? ""
    }
}
