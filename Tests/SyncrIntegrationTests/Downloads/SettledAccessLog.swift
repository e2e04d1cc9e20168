import Foundation

extension Nginx {
    /// The access log with a line for every request that ended before this call.
    ///
    /// nginx writes a request's line after the last byte of its response left, so a client can
    /// have its answer, and even have exited, before the line is in the file. This asks for a
    /// marker path and waits for the marker's line: nginx runs as one process (master_process
    /// off) and handles events in turn, so every request that ended before the marker was
    /// logged before it. The marker's own line is left out.
    func settledAccessLog() async throws -> [AccessLogEntry] {
        let marker = "/.settle-" + UUID().uuidString
        let request = try await runProcess(executable: "/usr/bin/curl",
                                           arguments: ["-sk", "-o", "/dev/null", "--noproxy", "*", "--max-time", "30", url(marker)],
                                           timeout: .seconds(60))
        guard request.exitCode == 0 else { throw SettleFailure(detail: "curl \(marker): exit \(request.exitCode): \(request.stderr)") }
        var entries: [AccessLogEntry] = []
        let logged = try await poll(timeout: .seconds(30)) {
            entries = try accessLog()
            return entries.contains { $0.uri == marker }
        }
        guard logged else { throw SettleFailure(detail: "the line of \(marker) never appeared in the access log") }
        return entries.filter { !$0.uri.hasPrefix("/.settle-") }
    }

    struct SettleFailure: Error, CustomStringConvertible {
        var detail: String
        var description: String { "nginx access log: \(detail)" }
    }
}
