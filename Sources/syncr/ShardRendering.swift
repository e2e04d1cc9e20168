import SyncrCore
import SyncrManifest

extension Rendering {
    /// The bytes of a shard's entries (their sizes, known ones only): what balancing is about.
    static func shardBytes(_ items: [PlanItem]) -> Int64 {
        items.reduce(0) { $0.clampedAdding($1.size ?? 0) }
    }

    /// `{"index": 2, "count": 4, "method": "hash", "entries": 3, "manifest_entries": 10, "bytes": N}`.
    static func shardJSON(_ run: ShardRun, items: [PlanItem]) -> JSON {
        .object([
            ("index", .int(Int64(run.shard.index))),
            ("count", .int(Int64(run.shard.count))),
            ("method", .string(run.method.rawValue)),
            ("entries", .int(Int64(items.count))),
            ("manifest_entries", .int(Int64(run.manifestEntries))),
            ("bytes", .int(shardBytes(items))),
        ])
    }

    /// `Shard 2/4 (by hash of destination): 3 of 10 entries, 1.2 MiB (1258291 bytes).`
    static func shardLine(_ run: ShardRun, items: [PlanItem]) -> String {
        let how = run.method == .bytes ? "balanced by bytes from the lockfile" : "by hash of destination"
        let bytes = shardBytes(items)
        let unknown = items.filter { $0.size == nil }.count
        return "Shard \(run.shard) (\(how)): \(items.count) of \(run.manifestEntries) entries, "
            + "\(ByteSize.format(bytes)) (\(bytes) bytes)" + (unknown > 0 ? " plus \(unknown) of unknown size" : "") + "."
    }
}
