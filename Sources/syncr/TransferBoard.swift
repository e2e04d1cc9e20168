#if canImport(Glibc)
import Glibc
#endif
import SyncrCore
import SyncrManifest

/// Which item an event is about: downloads and uploads are counted in separate lists, and the
/// objects listed from one `s3://` prefix entry share its index and differ by `object`.
struct EntryKey: Hashable, Sendable {
    var kind: EntryKind
    var index: Int
    var object: Int? = nil
}

extension PlanItem {
    var key: EntryKey { EntryKey(kind: kind, index: index, object: object) }
}

/// Seconds on a clock that never goes back.
enum Monotonic {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Speed over the last few seconds, from a running byte count.
struct RateMeter: Sendable {
    private var samples: [(time: Double, value: Int64)] = []
    var window = 5.0

    mutating func add(_ value: Int64, at time: Double) {
        samples.append((time, value))
        // Keep one sample at or before the window's start, so the rate covers the whole window.
        while samples.count > 2, samples[1].time <= time - window { samples.removeFirst() }
    }

    /// Bytes per second up to `now`; nil until half a second of samples exists. A transfer that
    /// stalls slows down here as time passes without new bytes.
    func rate(at now: Double) -> Double? {
        guard let first = samples.first, let last = samples.last, now - first.time >= 0.5 else { return nil }
        return Double(max(0, last.value - first.value)) / (now - first.time)
    }
}

/// One entry being transferred.
struct ActiveEntry: Sendable {
    var item: PlanItem
    /// Its place in the order entries started, from 1.
    var number: Int
    var startedAt: Double
    /// Bytes already in place when it started: a resume's cached part.
    var base: Int64
    /// Bytes moved in this run so far (since it last went back to byte 0).
    var moved: Int64 = 0
    /// Bytes moved before it went back to byte 0 (`restart`): moved, so the run's totals and
    /// speed keep them, but toward the file no more.
    var discarded: Int64 = 0
    /// The part of `discarded` that the board's `expected` counts: what was moved before each
    /// restart at which the entry's size was known.
    var discardedOfExpected: Int64 = 0
    /// Bytes this run is to move, when known.
    var expected: Int64?
    var meter = RateMeter()

    /// The whole size (file or upload), when known.
    var size: Int64? { expected.map { base + $0 } }
    /// Bytes of `size` in place.
    var done: Int64 { size.map { min($0, base + moved) } ?? base + moved }
}

/// What the reporters know about a run: entries started, moving and finished, and bytes.
/// Not thread-safe: each reporter keeps it behind a lock.
struct TransferBoard: Sendable {
    let entryCount: Int
    let startedAt: Double
    private(set) var startedCount = 0
    private(set) var finishedCount = 0
    private(set) var failedCount = 0
    /// Entries moving now, in the order they started.
    private(set) var active: [ActiveEntry] = []
    /// Bytes moved by finished entries.
    private(set) var finishedMoved: Int64 = 0
    /// Bytes to move, over entries started (known sizes only).
    private(set) var expected: Int64 = 0
    var meter = RateMeter()

    init(entryCount: Int, now: Double = Monotonic.now()) {
        self.entryCount = entryCount
        startedAt = now
        meter.add(0, at: now)
    }

    /// Bytes moved so far.
    var moved: Int64 { finishedMoved + active.reduce(0) { $0 + $1.discarded + $1.moved } }
    /// Bytes moved toward `expected`.
    private var movedOfExpected: Int64 {
        finishedMoved + active.reduce(0) { sum, entry in
            sum + entry.discardedOfExpected + (entry.expected.map { min($0, entry.moved) } ?? 0)
        }
    }
    /// `expected` may still grow: entries not yet started, or sizes not known.
    var totalIsPartial: Bool {
        finishedCount + active.count < entryCount || active.contains { $0.expected == nil }
    }
    /// Bytes left of `expected`.
    var remaining: Int64 { max(0, expected - movedOfExpected) }

    func entry(_ key: EntryKey) -> ActiveEntry? { active.first { $0.item.key == key } }

    /// Records a start; returns the entry's number.
    mutating func start(_ item: PlanItem, now: Double) -> Int {
        startedCount += 1
        var base: Int64 = item.offset
        if let size = item.size, let bytes = item.bytes { base = max(0, size - bytes) }
        if item.kind == .upload { base = 0 }
        var entry = ActiveEntry(item: item, number: startedCount, startedAt: now, base: base, expected: item.bytes)
        entry.meter.add(0, at: now)
        expected = expected.clampedAdding(item.bytes ?? 0)
        active.removeAll { $0.item.key == item.key }
        active.append(entry)
        return startedCount
    }

    /// Records bytes moved. Counts only go up: the library's events already do (`ProgressGate`:
    /// a file's connections report their own views, a retry starts counting again); held here
    /// too, so that the board never depends on it.
    mutating func progress(_ key: EntryKey, transferred: Int64, total: Int64?, now: Double) {
        guard let i = active.firstIndex(where: { $0.item.key == key }) else { return }
        if active[i].expected == nil, let total, total > 0 {
            let bytes = max(0, total - active[i].base)
            active[i].expected = bytes
            expected += bytes
        }
        var value = max(active[i].moved, transferred)
        if let limit = active[i].expected { value = min(value, limit) }
        active[i].moved = value
        active[i].meter.add(value, at: now)
        meter.add(moved, at: now)
    }

    /// Records that an entry went back to byte 0 (`EntryNote.startsOver`): its cached part no
    /// longer counts as in place, and the bytes it moves from now on count from 0, so that a
    /// resume the server turned into a whole download is not shown done when the missing
    /// part's worth has arrived. The bytes it had moved stay moved: the total line and its
    /// speed went back by them until the entry ended (a segmented download that fell back to
    /// one stream), and the entry's result counts them.
    mutating func restart(_ key: EntryKey) {
        guard let i = active.firstIndex(where: { $0.item.key == key }) else { return }
        let thrown = active[i].moved
        active[i].discarded += thrown
        if let size = active[i].size {
            active[i].discardedOfExpected += thrown
            expected += thrown + size - (active[i].expected ?? 0)
            active[i].expected = size
        }
        active[i].base = 0
        active[i].moved = 0
    }

    /// Records the end of an entry (started or not: skipped and unplannable entries never start).
    mutating func finish(_ result: ItemResult, now: Double) {
        finishedCount += 1
        if result.status == .failed { failedCount += 1 }
        if let i = active.firstIndex(where: { $0.item.key == result.item.key }) {
            let entry = active.remove(at: i)
            // What it was to move becomes what it did move, so the totals add up.
            expected += result.transferred - (entry.expected ?? 0) - entry.discardedOfExpected
        } else {
            expected += result.transferred
        }
        finishedMoved += result.transferred
        meter.add(moved, at: now)
    }
}

/// Numbers as progress shows them.
enum ProgressText {
    static func speed(_ bytesPerSecond: Double?) -> String {
        guard let bytesPerSecond, bytesPerSecond.isFinite else { return "--/s" }
        return ByteSize.format(Int64(bytesPerSecond)) + "/s"
    }

    /// `0:07`, `12:34`, `1:02:03`; nil when it cannot be told.
    static func eta(remaining: Int64, rate: Double?) -> String? {
        guard let rate, rate > 0 else { return remaining == 0 ? "0:00" : nil }
        let seconds = Double(remaining) / rate
        guard seconds.isFinite, seconds < 100 * 3600 else { return nil }
        return clock(Int(seconds.rounded(.up)))
    }

    static func clock(_ total: Int) -> String {
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):" + (m < 10 ? "0\(m)" : "\(m)") + ":" + ss }
        return "\(m):" + ss
    }

    static func percent(_ done: Int64, of total: Int64) -> String {
        guard total > 0 else { return "100%" }
        let p = Int(Double(done) * 100 / Double(total))
        return "\(min(100, max(0, p)))%"
    }

    /// Columns a terminal gives `s`: East Asian wide characters and emoji take two.
    static func width(_ s: String) -> Int {
        s.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of c: Character) -> Int {
        guard let v = c.unicodeScalars.first?.value else { return 0 }
        if v < 0x1100 { return 1 }
        let wide: [ClosedRange<UInt32>] = [0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF,
                                           0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
                                           0x1F900...0x1F9FF, 0x20000...0x3FFFD]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// `s` in at most `columns` columns: cut in the middle, keeping the start and the more
    /// telling end (a file's name), joined by "...".
    static func fit(_ s: String, _ columns: Int) -> String {
        guard width(s) > columns else { return s }
        guard columns > 3 else { return String(repeating: ".", count: max(0, columns)) }
        let room = columns - 3
        let headRoom = room / 3
        var head = "", tail = ""
        var used = 0
        for c in s {
            let w = width(of: c)
            if used + w > headRoom { break }
            head.append(c)
            used += w
        }
        var tailUsed = 0
        for c in s.reversed() {
            let w = width(of: c)
            if tailUsed + w > room - used { break }
            tail.insert(c, at: tail.startIndex)
            tailUsed += w
        }
        return head + "..." + tail
    }

    /// `s` cut at the end to `columns` columns.
    static func clip(_ s: String, _ columns: Int) -> String {
        var out = "", used = 0
        for c in s {
            let w = width(of: c)
            if used + w > columns { break }
            out.append(c)
            used += w
        }
        return out
    }

    static func pad(_ s: String, _ columns: Int) -> String {
        let w = width(s)
        return w >= columns ? s : s + String(repeating: " ", count: columns - w)
    }
}
