import Foundation

extension Project {
    /// Runs `syncr ARGS` like `run`, and returns with its result the peak resident set size of
    /// that process alone, in KiB: `ru_maxrss` from `wait4` on it, through a small python3
    /// parent (the test process's own peak, or that of all its children, would count other
    /// tests running beside it).
    func runMeasuringPeakMemory(_ arguments: [String]) async throws -> (result: ProcessResult, peakKiB: Int) {
        let report = folder.appending(".peak-rss-" + UUID().uuidString)
        let waiter = """
            import os, sys
            pid = os.fork()
            if pid == 0:
                os.execv(sys.argv[2], sys.argv[2:])
            _, status, usage = os.wait4(pid, 0)
            with open(sys.argv[1], "w") as f:
                f.write(str(usage.ru_maxrss))
            sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
            """
        let result = try await runProcess(executable: "python3", arguments: ["-c", waiter, report.path, binary.path] + arguments,
                                          environment: ["NO_PROXY": "*", "no_proxy": "*"], cwd: folder.url,
                                          timeout: .seconds(300))
        let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: report)
        guard let kib = Int(text) else { throw PeakMemoryUnknown(output: result.stderr) }
        return (result, kib)
    }

    struct PeakMemoryUnknown: Error, CustomStringConvertible {
        var output: String
        var description: String { "the peak memory of syncr was not reported: \(output)" }
    }
}
