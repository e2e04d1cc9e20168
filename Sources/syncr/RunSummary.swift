import SyncrCore
import SyncrManifest

/// The summary every `apply` ends with, on stderr: counts per action, bytes moved, time, and each
/// failure with its reason.
enum RunSummary {
    /// `syncr: 2 downloaded, 1 resumed, 1 uploaded, 3 up to date, 1 failed; 12.0 MiB received,
    /// 1.0 MiB sent in 4.52 s (2.9 MiB/s).` then `  failed: NAME: reason` per failure.
    static func lines(_ report: ApplyReport) -> [String] {
        // Counted, never filtered: a filter copies every result, which at 20,000 entries was a
        // quarter of a no-op run's peak memory, at its very end.
        let results = report.results
        let labels: [(Action, String)] = [(.download, "downloaded"), (.resume, "resumed"), (.restart, "restarted"),
                                          (.upload, "uploaded")]
        var counts: [String] = []
        for (action, label) in labels {
            let n = results.count { $0.status == .ok && $0.item.action == action }
            if n > 0 { counts.append("\(n) \(label)") }
        }
        if counts.isEmpty { counts.append("0 transferred") }
        counts.append("\(results.count { $0.status == .skipped }) up to date")
        let failed = report.failed
        counts.append("\(failed.count) failed")
        if !report.interrupted.isEmpty { counts.append("\(report.interrupted.count) interrupted") }
        let sent = results.reduce(0) { $1.item.kind == .upload ? $0 + $1.transferred : $0 }
        let received = report.transferred - sent
        var text = "syncr: " + counts.joined(separator: ", ") + "; \(ByteSize.format(received)) received, "
            + "\(ByteSize.format(sent)) sent in \(Rendering.seconds(report.seconds))"
        if report.transferred > 0 { text += " (\(Rendering.speed(bytes: report.transferred, seconds: report.seconds)))" }
        var lines = [text + "."]
        for f in failed {
            lines.append("  failed: \(Rendering.name(f.item)): \(f.error?.description ?? "unknown error")")
        }
        return lines
    }
}
