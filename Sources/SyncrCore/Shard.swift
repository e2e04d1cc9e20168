import SyncrManifest

/// One share of a manifest run on several machines: shard `index` of `count`, 1-based like
/// the shard flags of other tools (`--shard 2/4`).
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// 1 ... `count`.
    public let index: Int
    /// How many shards the manifest is split into (at least 1).
    public let count: Int

    /// A shard, or nil unless `1 <= index <= count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `I/N` (`2/4`); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: i, count: n)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }
}

/// A manifest entry: downloads and uploads are numbered apart, by their index in the manifest.
public enum EntryID: Hashable, Sendable, Comparable {
    /// The entry at this index of `downloads:`.
    case download(Int)
    /// The entry at this index of `uploads:`.
    case upload(Int)
}

/// Which shard each entry belongs to. Every machine computes the same answer from the same
/// manifest (and lock), so the shards are disjoint and together hold every entry.
public struct ShardAssignment: Sendable {
    /// How the entries were spread.
    public enum Method: String, Sendable {
        /// By a stable hash of each entry's destination: adding an entry moves no other.
        case hash
        /// By the sizes in the lockfile, largest first onto the lightest shard; entries the
        /// lock does not size (uploads, entries missing from it) go by hash.
        case bytes
    }

    /// The number of shards.
    public let count: Int
    /// `hash`, or `bytes` when a lock sized the downloads.
    public let method: Method
    /// The shard (1-based) of each entry of the manifest.
    public let shards: [EntryID: Int]

    /// Assigns every entry of `manifest` to one of `count` shards.
    /// - Parameter lock: when given, downloads it sizes are balanced by bytes.
    public init(manifest: Manifest, lock: Lockfile?, count: Int) {
        let count = max(1, count)
        self.count = count
        var shards: [EntryID: Int] = [:]
        shards.reserveCapacity(manifest.downloads.count + manifest.uploads.count)
        var sized: [(id: EntryID, key: String, size: Int64)] = []
        for d in manifest.downloads {
            if let lock, let size = lock.entry(to: d.to)?.size {
                sized.append((.download(d.index), d.to, size))
            } else {
                shards[.download(d.index)] = Self.hashShard(Self.key(d), count: count)
            }
        }
        for u in manifest.uploads {
            shards[.upload(u.index)] = Self.hashShard(Self.key(u), count: count)
        }
        method = sized.isEmpty ? .hash : .bytes
        for (id, shard) in Self.balance(sized, count: count) { shards[id] = shard }
        self.shards = shards
    }

    /// What the hash of a download is taken over: its destination as written.
    static func key(_ d: Download) -> String { "download\u{0}" + d.to }
    /// An upload's destination is its URL as written; its source tells apart several uploads
    /// to one endpoint.
    static func key(_ u: Upload) -> String { "upload\u{0}" + u.url.written + "\u{0}" + u.from }

    /// Whether `entry` is in `shard`.
    public func contains(_ entry: EntryID, in shard: Int) -> Bool { shards[entry] == shard }

    /// A shard from 1 to `count` for `key`: FNV-1a over the UTF-8 bytes, then a 64-bit mixer so
    /// the low bits are as random as the high ones. Swift's `Hasher` is seeded per process, so
    /// it would give every machine another answer.
    static func hashShard(_ key: String, count: Int) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            h ^= UInt64(byte)
            h &*= 0x0000_0100_0000_01b3
        }
        // splitmix64's finalizer.
        h ^= h >> 30
        h &*= 0xbf58_476d_1ce4_e5b9
        h ^= h >> 27
        h &*= 0x94d0_49bb_1331_11eb
        h ^= h >> 31
        return Int(h % UInt64(count)) + 1
    }

    /// Largest first onto the lightest shard (ties: the lower shard), with ties between sizes
    /// broken by destination so that every machine sorts alike.
    static func balance(_ sized: [(id: EntryID, key: String, size: Int64)], count: Int) -> [(EntryID, Int)] {
        let order = sized.sorted { $0.size != $1.size ? $0.size > $1.size : $0.key < $1.key }
        // Only the first `order.count` shards can be the lightest when an entry is placed (an
        // empty one is found by then), so no more are weighed: a count far above the entries
        // (`--shard 1/9223372036854775807`) made an array of that many.
        var loads = [Int64](repeating: 0, count: min(count, order.count))
        guard !loads.isEmpty else { return [] }
        var result: [(EntryID, Int)] = []
        result.reserveCapacity(order.count)
        for entry in order {
            var lightest = 0
            for s in loads.indices.dropFirst() where loads[s] < loads[lightest] { lightest = s }
            loads[lightest] = loads[lightest].clampedAdding(entry.size)
            result.append((entry.id, lightest + 1))
        }
        return result
    }
}

/// What a sharded run is: its shard, how the manifest was split, and how many entries the
/// whole manifest has.
public struct ShardRun: Sendable, Equatable {
    /// This run's shard.
    public var shard: Shard
    /// By hash of destination, or by bytes from the lock.
    public var method: ShardAssignment.Method
    /// Entries (downloads and uploads) in the whole manifest, over all shards.
    public var manifestEntries: Int

    /// Creates a description of a sharded run.
    public init(shard: Shard, method: ShardAssignment.Method, manifestEntries: Int) {
        self.shard = shard
        self.method = method
        self.manifestEntries = manifestEntries
    }
}
