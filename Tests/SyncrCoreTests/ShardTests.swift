@testable import SyncrCore
import SyncrManifest
import Testing
import Foundation

/// `--shard I/N`: every entry lands in exactly one shard, every machine computes the same split,
/// and a lock balances the shards by bytes.
@Suite(.timeLimit(.minutes(10))) struct ShardTests {
    /// A small deterministic generator, so a failing case can be run again from its seed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }

    /// A manifest of `downloads` downloads and `uploads` uploads with made-up names.
    static func manifest(downloads: Int, uploads: Int, salt: String = "") throws -> Manifest {
        var text = "version: 1\ndownloads:\n"
        for i in 0..<downloads { text += "  - { url: \"https://example.com/\(salt)\(i).bin\", to: \"data/\(salt)\(i).bin\" }\n" }
        if uploads > 0 { text += "uploads:\n" }
        for i in 0..<uploads { text += "  - { from: \"out/\(i).tar\", to: \"https://up.example.com/\(i)\" }\n" }
        if downloads == 0 { text = text.replacingOccurrences(of: "downloads:\n", with: "") }
        return try ManifestLoader.parse(text: text, path: "syncr.yml", directory: "/tmp/shard-tests", environment: [:])
    }

    /// The entries a Session for shard `i` of `n` runs.
    static func entries(_ manifest: Manifest, shard: Shard, lock: Lockfile? = nil) -> [EntryID] {
        let session = Session(manifest: manifest, options: RunOptions(shard: shard, lock: lock))
        defer { session.close() }
        return session.manifest.downloads.map { .download($0.index) } + session.manifest.uploads.map { .upload($0.index) }
    }

    @Test(arguments: [1, 2, 3, 7, 11, 23, 50])
    func unionIsTheManifestAndShardsAreDisjoint(seed: Int) throws {
        var random = Generator(state: UInt64(seed))
        let downloads = Int.random(in: 0...300, using: &random)
        let uploads = Int.random(in: 0...20, using: &random)
        let count = Int.random(in: 1...12, using: &random)
        let manifest = try Self.manifest(downloads: downloads, uploads: uploads, salt: "s\(seed)-")
        // Half the cases with a lock sizing a random part of the downloads.
        var lock: Lockfile?
        if seed % 2 == 1 {
            let locked = manifest.downloads.filter { _ in Bool.random(using: &random) }.map {
                LockedEntry(to: $0.to, url: $0.url.written, size: Int64.random(in: 0...1 << 30, using: &random))
            }
            lock = Lockfile(manifest: "syncr.yml", entries: locked)
        }
        var seen: [EntryID: Int] = [:]
        for i in 1...count {
            for entry in Self.entries(manifest, shard: Shard(index: i, count: count)!, lock: lock) {
                #expect(seen[entry] == nil, "\(entry) is in shard \(seen[entry] ?? 0) and shard \(i) of \(count)")
                seen[entry] = i
            }
        }
        let all = manifest.downloads.map { EntryID.download($0.index) } + manifest.uploads.map { .upload($0.index) }
        #expect(Set(seen.keys) == Set(all), "\(downloads) downloads, \(uploads) uploads, \(count) shards")
    }

    /// Without a lock, adding an entry moves no other entry to another shard.
    @Test func addingAnEntryMovesNoOther() throws {
        let before = try Self.manifest(downloads: 200, uploads: 5)
        let after = try Self.manifest(downloads: 201, uploads: 6)
        let a = ShardAssignment(manifest: before, lock: nil, count: 5)
        let b = ShardAssignment(manifest: after, lock: nil, count: 5)
        #expect(a.method == .hash)
        for (entry, shard) in a.shards { #expect(b.shards[entry] == shard, "\(entry) moved") }
    }

    /// The hash is part of the contract between machines (and syncr versions): these values
    /// must never change, or two machines running different releases would split alike no more.
    @Test func hashIsStableAcrossProcessesAndReleases() {
        let keys = ["download\u{0}data/a.bin", "download\u{0}b", "upload\u{0}https://x/\u{0}out"]
        let shards = keys.map { ShardAssignment.hashShard($0, count: 8) }
        #expect(shards == [6, 8, 2], "got \(shards)")
        #expect(ShardAssignment.hashShard("download\u{0}data/a.bin", count: 1) == 1)
    }

    /// Hashing spreads entries fairly evenly: no shard of 8 holds more than 1.5x its share of
    /// 8,000 entries.
    @Test func hashSpreadsEntries() throws {
        let manifest = try Self.manifest(downloads: 8000, uploads: 0)
        let assignment = ShardAssignment(manifest: manifest, lock: nil, count: 8)
        var counts = [Int](repeating: 0, count: 9)
        for shard in assignment.shards.values { counts[shard] += 1 }
        #expect(counts[1...].allSatisfy { $0 > 500 && $0 < 1500 }, "\(counts)")
    }

    /// With a lock, 100,000 entries of random sizes (1 KiB to 64 MiB, log-uniform) fall into
    /// 8 shards whose bytes differ from the mean by at most 2%. (`balance` is what the lock's
    /// sizes go through; a manifest of 100,000 entries would only slow the test.)
    @Test func lockBalancesBytesWithinTwoPercent() throws {
        var random = Generator(state: 99)
        let sized: [(id: EntryID, key: String, size: Int64)] = (0..<100_000).map { i in
            (.download(i), "data/\(i).bin", Int64(1024.0 * pow(2, Double.random(in: 0..<16, using: &random))))
        }
        var bytes = [Int64](repeating: 0, count: 9)
        for (id, shard) in ShardAssignment.balance(sized, count: 8) {
            guard case .download(let i) = id else { continue }
            bytes[shard] += sized[i].size
        }
        let mean = Double(bytes[1...].reduce(0, +)) / 8
        let worst = bytes[1...].map { abs(Double($0) - mean) / mean }.max()!
        #expect(worst <= 0.02, "shard bytes \(bytes[1...]), worst \(worst * 100)% from the mean")
    }

    /// A lock that sizes the downloads switches the split to bytes; what it does not size
    /// (here: uploads) still goes by hash.
    @Test func aLockSwitchesToBytes() throws {
        let manifest = try Self.manifest(downloads: 40, uploads: 3)
        let lock = Lockfile(manifest: "syncr.yml", entries: manifest.downloads.map {
            LockedEntry(to: $0.to, url: $0.url.written, size: Int64($0.index + 1) * 1000)
        })
        let assignment = ShardAssignment(manifest: manifest, lock: lock, count: 4)
        #expect(assignment.method == .bytes)
        let byHash = ShardAssignment(manifest: manifest, lock: nil, count: 4)
        for u in manifest.uploads { #expect(assignment.shards[.upload(u.index)] == byHash.shards[.upload(u.index)]) }
        var bytes = [Int64](repeating: 0, count: 5)
        for d in manifest.downloads { bytes[assignment.shards[.download(d.index)]!] += Int64(d.index + 1) * 1000 }
        #expect(bytes[1...].max()! - bytes[1...].min()! <= 40_000, "\(bytes[1...])")
    }

    /// A locked run holds the whole manifest against the lock, not only its shard: a lock that
    /// lacks one entry, or locks another URL or SHA-256 for one, gives every shard the same
    /// problems (each shard said only its own entries', so all but one ran).
    @Test(arguments: [1, 4, 7])
    func aStaleLockFailsEveryShardAlike(count: Int) throws {
        let manifest = try Self.manifest(downloads: 30, uploads: 2)
        var entries = manifest.downloads.dropFirst().map { LockedEntry(to: $0.to, url: $0.url.written, size: 100) }
        entries[3].url = "https://example.com/other.bin"
        let lock = Lockfile(manifest: "syncr.yml", entries: entries)
        var said: Set<[String]> = []
        for i in 1...count {
            let session = Session(manifest: manifest, options: RunOptions(shard: Shard(index: i, count: count), lock: lock, locked: true))
            defer { session.close() }
            said.insert(session.lockProblems())
        }
        #expect(said == [[
            "syncr.yml: downloads[0] (to: data/0.bin) is not in syncr.lock; run 'syncr lock' to add it",
            "syncr.yml: downloads[4] (to: data/4.bin): syncr.lock locks https://example.com/other.bin, "
                + "the manifest asks for https://example.com/4.bin; run 'syncr lock' to lock the new URL",
        ]], "\(said)")
    }

    /// Largest first onto the lightest shard, ties by destination: 9, 7, 6, 5, 4 over 2 shards.
    @Test func largestFirstOntoTheLightest() {
        let sized: [(id: EntryID, key: String, size: Int64)] = [
            (.download(0), "a", 5), (.download(1), "b", 9), (.download(2), "c", 6), (.download(3), "d", 7), (.download(4), "e", 4),
        ]
        let result = Dictionary(uniqueKeysWithValues: ShardAssignment.balance(sized, count: 2))
        // 9 -> 1; 7 -> 2; 6 -> 2 (7 < 9); 5 -> 1 (9 < 13); 4 -> 2 (13 < 14).
        #expect(result[.download(1)] == 1)
        #expect(result[.download(3)] == 2)
        #expect(result[.download(2)] == 2)
        #expect(result[.download(0)] == 1)
        #expect(result[.download(4)] == 2)
    }

    /// More shards than sized entries: each entry alone on one of the first shards, as if
    /// every shard were weighed; a count near `Int.max` neither allocates it nor loops over it.
    @Test func farMoreShardsThanEntries() {
        let sized: [(id: EntryID, key: String, size: Int64)] = [(.download(0), "a", 5), (.download(1), "b", 0), (.download(2), "c", 9)]
        for count in [3, 10, Int.max] {
            let result = Dictionary(uniqueKeysWithValues: ShardAssignment.balance(sized, count: count))
            #expect(result == [.download(2): 1, .download(0): 2, .download(1): 3], "\(count)")
        }
        #expect(ShardAssignment.balance([], count: Int.max).isEmpty)
    }

    @Test(arguments: [("2/4", 2, 4), ("1/1", 1, 1), ("10/10", 10, 10)])
    func parsesShards(text: String, index: Int, count: Int) {
        #expect(Shard(text) == Shard(index: index, count: count))
    }

    @Test(arguments: ["0/4", "5/4", "2", "a/b", "2/0", "-1/3", "1/2/3", ""])
    func refusesWhatIsNoShard(text: String) {
        #expect(Shard(text) == nil)
    }
}

