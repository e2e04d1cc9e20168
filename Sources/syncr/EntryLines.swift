import SyncrCore
import SyncrManifest

/// The whole lines printed about single entries, in plain mode and above the bar alike.
struct EntryLines: Sendable {
    var palette: Palette
    var entryCount: Int

    /// `[2/5] download out/a.bin (1.0 MiB) from http://...`
    func started(_ item: PlanItem, number: Int) -> String {
        var what = "\(item.action.rawValue) \(Rendering.name(item))"
        if let size = item.size {
            // A resume names what is cached: with pieces from several connections that is
            // more than the offset of the first missing byte.
            what += item.action == .resume
                ? ": \(ByteSize.format(size - (item.bytes ?? 0))) of \(ByteSize.format(size)) cached"
                : " (\(ByteSize.format(size)))"
        }
        return "[\(number)/\(entryCount)] \(what)" + (item.kind == .upload ? "" : " from \(Rendering.printable(item.url))")
    }

    /// `  done download out/a.bin: 1.0 MiB in 0.52 s, 1.9 MiB/s` (action, size, time, average
    /// speed), or the failure with its reason. Nil for an entry that was up to date.
    func finished(_ result: ItemResult) -> String? {
        let name = Rendering.name(result.item)
        switch result.status {
        case .ok:
            if result.item.action == .resume, result.transferred == 0, result.item.bytes == 0, let size = result.item.size {
                // All was cached (an archive unpacked again, a file fetched but not yet placed):
                // a speed of 0 B/s would read as a stalled transfer.
                return "  \(palette.green("done")) resume \(name): all \(ByteSize.format(size)) from the cache, nothing fetched"
            }
            let note = result.item.action == .resume && result.transferred < (result.item.size ?? 0)
                ? " (resumed at byte \(result.item.offset))" : ""
            return "  \(palette.green("done")) \(result.item.action.rawValue) \(name): "
                + "\(ByteSize.format(result.transferred)) in \(Rendering.seconds(result.seconds)), "
                + "\(Rendering.speed(bytes: result.transferred, seconds: result.seconds))\(note)"
        case .skipped, .interrupted:
            // Interrupted entries are listed after the summary.
            return nil
        case .failed:
            return "  \(palette.red("FAILED")) \(name): \(Rendering.printable(result.error?.description ?? "unknown error"))"
        }
    }

    /// `attempt` counts the attempts that failed without getting further; one that got further
    /// uses no retry (0), and the line says it goes on rather than counting "retry #0".
    func retrying(_ name: String, attempt: Int, delay: Double, error: SyncError) -> String {
        guard attempt > 0 else {
            return "  \(palette.yellow("resume")) of \(name) in \(Rendering.seconds(delay)) (it got further: no retry used): \(Rendering.printable(error.description))"
        }
        return "  \(palette.yellow("retry")) #\(attempt) of \(name) in \(Rendering.seconds(delay)): \(Rendering.printable(error.description))"
    }

    func note(_ name: String, _ note: EntryNote) -> String {
        "  note: \(name): \(Rendering.printable(note.description))"
    }

    /// The name of an entry an index-only event is about.
    static func name(_ key: EntryKey, on board: TransferBoard) -> String {
        board.entry(key).map { Rendering.name($0.item) } ?? "\(key.kind.rawValue)s[\(key.index)]"
    }
}
