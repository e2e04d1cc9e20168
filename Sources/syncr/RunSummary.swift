import SyncrCore
import SyncrManifest

/// The summary every `apply` ends with, on stderr: counts per action, bytes moved, time, and each
/// failure with its reason.
enum RunSummary {
    /// `syncr: 2 downloaded, 1 resumed, 1 uploaded, 3 up to date, 1 failed; 12.0 MiB received,
    /// 1.0 MiB sent in 4.52 s (2.9 MiB/s).` then `  failed: NAME: reason` per failure.
    static func lines(_ report: ApplyReport) -> [String] {
        let ok = report.results.filter { $0.status == .ok }
        let labels: [(Action, String)] = [(.download, "downloaded"), (.resume, "resumed"), (.restart, "restarted"),
                                          (.upload, "uploaded")]
        var counts: [String] = []
        for (action, label) in labels {
            let n = ok.filter { $0.item.action == action }.count
            if n > 0 { counts.append("\(n) \(label)") }
        }
        if counts.isEmpty { counts.append("0 transferred") }
        counts.append("\(report.results.filter { $0.status == .skipped }.count) up to date")
        let failed = report.failed
        counts.append("\(failed.count) failed")
        if !report.interrupted.isEmpty { counts.append("\(report.interrupted.count) interrupted") }
        let sent = report.results.filter { $0.item.kind == .upload }.reduce(0) { $0 + $1.transferred }
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
