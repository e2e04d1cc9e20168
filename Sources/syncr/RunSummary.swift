import SyncrCore
import SyncrManifest

/// The summary every `apply` ends with, on stderr: counts per action, bytes moved, time, and each
/// failure with its reason.
enum RunSummary {
    /// `syncr: 2 downloaded, 1 resumed, 1 uploaded, 3 up to date, 1 failed; 12.0 MiB received,
    /// 1.0 MiB sent in 4.52 s (2.9 MiB/s).` then `  failed: NAME: reason` per failure. Bytes of
    /// uploads that failed or were interrupted count as sent, since they went over the network
    /// (as a failed download's count as received), and are named as such: `1.0 MiB sent (512.0 KiB
    /// of it by uploads that did not finish)`. Unlike a download's, kept in the cache to
    /// resume, most are lost (all but an object store's finished parts).
    static func lines(_ report: ApplyReport) -> [String] {
        // Counted in one pass, never filtered: a filter copies every result, which at 20,000
        // entries was a quarter of a no-op run's peak memory, at its very end. Read in place:
        // each pass of `count(where:)` or `reduce` copied every result too (six per entry).
        let results = report.results
        var done: [Action: Int] = [:]
        var upToDate = 0, interrupted = 0
        var sent: Int64 = 0, received: Int64 = 0, sentUnfinished: Int64 = 0
        results.withUnsafeBufferPointer { all in
            for i in all.indices {
                switch all[i].status {
                case .ok: done[all[i].item.action, default: 0] += 1
                case .skipped: upToDate += 1
                case .interrupted: interrupted += 1
                default: break
                }
                if all[i].item.kind == .upload {
                    sent += all[i].transferred
                    if all[i].status == .failed || all[i].status == .interrupted { sentUnfinished += all[i].transferred }
                } else {
                    received += all[i].transferred
                }
            }
        }
        let labels: [(Action, String)] = [(.download, "downloaded"), (.resume, "resumed"), (.restart, "restarted"),
                                          (.upload, "uploaded")]
        var counts = labels.compactMap { action, label in done[action].map { "\($0) \(label)" } }
        if counts.isEmpty { counts.append("0 transferred") }
        counts.append("\(upToDate) up to date")
        let failed = report.failed
        counts.append("\(failed.count) failed")
        if interrupted > 0 { counts.append("\(interrupted) interrupted") }
        var text = "syncr: " + counts.joined(separator: ", ") + "; \(ByteSize.format(received)) received, "
            + "\(ByteSize.format(sent)) sent"
            + (sentUnfinished > 0 ? " (\(ByteSize.format(sentUnfinished)) of it by uploads that did not finish)" : "")
            + " in \(Rendering.seconds(report.seconds))"
        let transferred = sent + received
        if transferred > 0 { text += " (\(Rendering.speed(bytes: transferred, seconds: report.seconds)))" }
        var lines = [text + "."]
        for f in failed {
            lines.append("  failed: \(Rendering.name(f.item)): \(Rendering.printable(f.error?.description ?? "unknown error"))")
        }
        return lines
    }
}
