#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing

/// What one run of the `syncr` binary printed and how it exited.
struct CLIResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Both streams, for "this must appear nowhere" checks.
    var allOutput: String { stdout + "\n" + stderr }
}

/// Runs the built `syncr` binary in a private temporary folder.
///
/// Named apart from the shared helpers in `Support/` (written concurrently) to avoid clashes.
final class CLIHarness: Sendable {
    /// The folder the binary runs in; manifests are written here.
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.path + "/syncr-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// `SYNCR_BIN` if set, else `syncr` beside the test bundle (`.build/debug/syncr`).
    static let binary: String? = {
        if let override = ProcessInfo.processInfo.environment["SYNCR_BIN"], !override.isEmpty {
            return override
        }
        var starts: [String] = []
        if let arg0 = CommandLine.arguments.first { starts.append(arg0) }
        if let executable = Bundle.main.executablePath { starts.append(executable) }
        for start in starts {
            // On Linux the bundle is a file in the build folder; on macOS the binary sits a few
            // levels above `X.xctest/Contents/MacOS/X`.
            var folder = (URL(fileURLWithPath: start).standardizedFileURL.path as NSString).deletingLastPathComponent
            for _ in 0..<4 {
                let candidate = folder + "/syncr"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                folder = (folder as NSString).deletingLastPathComponent
            }
        }
        return nil
    }()

    /// Writes `text` to `name` inside the folder and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let path = folder + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs `syncr arguments...` in the folder with `environment` added to a clean copy of ours.
    /// - Parameter stdout: where its stdout goes instead of a file read back (`/dev/full`, a
    ///   pipe nobody reads); the result's `stdout` is then empty.
    func run(_ arguments: [String], environment: [String: String] = [:], stdout: FileHandle? = nil) async throws -> CLIResult {
        let binary = try #require(Self.binary, "set SYNCR_BIN or build the syncr product first")
        // Output goes to files rather than pipes, so a chatty child can never block on a full pipe.
        let id = UUID().uuidString
        let outPath = folder + "/.stdout-" + id
        let errPath = folder + "/.stderr-" + id
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))

        var env = ProcessInfo.processInfo.environment
        // A proxy from the CI environment must not sit between syncr and 127.0.0.1.
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            env[name] = nil
        }
        env["NO_PROXY"] = "*"
        env.merge(environment) { _, new in new }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout ?? out
        process.standardError = err
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try launch(process)
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try out.close()
        try err.close()
        return CLIResult(status: status,
                         stdout: String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self),
                         stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self))
    }

    /// A port on 127.0.0.1 that nothing listens on: bound to port 0 to learn a free one, then
    /// closed, so connecting is refused at once.
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        try #require(named == 0)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
