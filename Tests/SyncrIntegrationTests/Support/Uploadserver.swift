import Foundation
import SyncrTestSupport

/// PyPI's `uploadserver`, a real multipart receiver (it parses forms with Python's standard
/// library): `python3 -m uploadserver PORT --bind 127.0.0.1 --directory DIR`. POST /upload takes
/// a form whose files are in the field `files`, stores them in DIR under their filenames and
/// answers 204.
enum Uploadserver {
    /// Whether the package is importable (scripts/setup installs it).
    static let installed: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import uploadserver"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? launch(process)) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    enum Failure: Error { case didNotStart }

    /// Starts it on a free port, storing into `directory`; returns the process and its port.
    static func start(directory: URL) async throws -> (ChildProcess, UInt16) {
        for _ in 0..<5 {
            let port = try freePort()
            let candidate = try launchServer { process in
                process.executableURL = URL(fileURLWithPath: try resolveExecutable("python3"))
                process.arguments = ["-m", "uploadserver", String(port), "--bind", "127.0.0.1", "--directory", directory.path]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
            }
            if await poll(timeout: .seconds(15), { isAccepting(port: port) || !candidate.isRunning }), candidate.isRunning {
                return (candidate, port)
            }
            candidate.terminate(grace: .seconds(1))
        }
        throw Failure.didNotStart
    }
}
