import Foundation

extension FaultServer {
    /// When each request for `path` arrived, in seconds on the server's monotonic clock, in
    /// order (faultserver.py's stats "arrivals"; control requests are not counted).
    func arrivals(path: String) async throws -> [Double] {
        struct Stats: Decodable {
            struct Path: Decodable { var arrivals: [Double] }
            var paths: [String: Path]
        }
        let result = try await runProcess(executable: "/usr/bin/curl",
                                          arguments: ["-sS", "--fail", "--noproxy", "*", "--max-time", "30", url("/_control/stats")],
                                          timeout: .seconds(60))
        guard result.exitCode == 0 else {
            throw Failure.control(endpoint: "stats", exitCode: result.exitCode, output: result.stdout + result.stderr)
        }
        return try JSONDecoder().decode(Stats.self, from: result.stdoutData).paths[path]?.arrivals ?? []
    }
}
