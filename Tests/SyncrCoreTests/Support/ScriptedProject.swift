import Foundation
@testable import SyncrCore
import SyncrHTTP
import SyncrLock
import SyncrManifest

/// A project folder whose manifest downloads files from a scripted server: the destination
/// folder, the cache, and a `Session` over a `ScriptedTransport`.
final class ScriptedProject {
    let folder: TemporaryFolder
    /// Settings every entry gets: no flushes (nothing here survives a power cut anyway), retries
    /// as given, one connection unless a test asks for more.
    var settings: Settings

    init(retries: Int = 2, connections: Int = 1, minSplit: Int64 = 64 << 10) throws {
        folder = try TemporaryFolder()
        settings = Settings(jobs: 4, retries: retries, timeoutMilliseconds: 30_000, headers: [],
                            connections: connections, minSplit: minSplit)
        settings.fsync = false
    }

    var root: String { folder.path }
    var cache: Cache { Cache(directory: root + "/.cache", flushes: false) }

    static func url(_ name: String) -> String { "http://scripted.test/" + name }

    /// A download of `name` from the scripted server into the project folder.
    func download(_ name: String, index: Int = 0, checksums: [Checksum] = []) -> Download {
        Download(index: index, location: SourceLocation(file: "syncr.yml", line: index + 2, column: 3),
                 url: Template(literal: Self.url(name)), to: name, destination: root + "/" + name,
                 allowOutside: false, checksums: checksums, settings: settings)
    }

    func manifest(_ downloads: [Download]) -> Manifest {
        var defaults = settings
        defaults.jobs = 4
        return Manifest(path: root + "/syncr.yml", directory: root, version: 1, cache: ".cache",
                        cacheDirectory: root + "/.cache", defaults: defaults, downloads: downloads)
    }

    /// A session of the one entry over `transport`.
    func session(_ download: Download, over transport: ScriptedTransport,
                 reporter: (any ProgressReporter)? = nil) -> Session {
        Session(manifest: manifest([download]), reporter: reporter, transport: transport)
    }

    /// Runs `apply` over `transport` and returns the one entry's result.
    func apply(_ download: Download, over transport: ScriptedTransport,
               reporter: (any ProgressReporter)? = nil) async -> ItemResult {
        let session = session(download, over: transport, reporter: reporter)
        defer { session.close() }
        return await session.apply().results[0]
    }

    /// Runs `plan` over `transport` and returns the one entry's item.
    func plan(_ download: Download, over transport: ScriptedTransport) async -> PlanItem {
        let session = Session(manifest: manifest([download]), transport: transport)
        defer { session.close() }
        return await session.plan().items[0]
    }

    /// The bytes of a file in the project (nil when it does not exist).
    func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: root + "/" + name).map { [UInt8]($0) }
    }

    /// How the file `name` differs from `expected`, in a line; nil when it holds exactly those
    /// bytes. (Comparing the arrays would print megabytes on a failure.)
    func difference(_ name: String, from expected: [UInt8]) -> String? {
        Self.difference(contents(name), from: expected)
    }

    static func difference(_ actual: [UInt8]?, from expected: [UInt8]) -> String? {
        guard let actual else { return "missing" }
        if actual == expected { return nil }
        let common = min(actual.count, expected.count)
        let first = (0..<common).first { actual[$0] != expected[$0] } ?? common
        return "\(actual.count) bytes where \(expected.count) were expected, first difference at byte \(first)"
    }

    func key(_ name: String) -> String { Cache.key(for: Self.url(name)) }

    /// The entry's record in the cache.
    func record(_ name: String) -> EntryState? { cache.loadState(key(name)) }

    /// The bytes in the entry's cache file.
    func cached(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: cache.dataPath(key(name))).map { [UInt8]($0) }
    }

    /// Leaves a partial download in the cache, as an interrupted run would: the bytes of
    /// `resource` in `ranges` at their offsets (a file cut after a lone prefix, else preallocated
    /// to the full size with zeros in the holes), and a record of `resource` that vouches for them.
    func leavePartial(_ name: String, of resource: Resource, ranges: [Range<Int64>]) throws {
        try cache.prepare()
        var data = [UInt8](repeating: 0, count: resource.size)
        for r in ranges { data.replaceSubrange(Int(r.lowerBound)..<Int(r.upperBound), with: resource.bytes[Int(r.lowerBound)..<Int(r.upperBound)]) }
        if ranges.count == 1, ranges[0].lowerBound == 0 { data = Array(data[0..<Int(ranges[0].upperBound)]) }
        try Data(data).write(to: URL(fileURLWithPath: cache.dataPath(key(name))))
        var state = EntryState(url: Self.url(name))
        state.size = Int64(resource.size)
        state.etag = resource.etag.flatMap(EntityTag.init(parsing:))
        state.lastModified = resource.lastModified
        state.ranges = RangeSet(ranges)
        try cache.saveState(state, key: key(name), durable: false)
    }
}

/// Collects the events of a run.
final class EventLog: ProgressReporter, Sendable {
    private let events = Locked<[ProgressEvent]>([])

    func report(_ event: ProgressEvent) { events.withLock { $0.append(event) } }

    /// The error text of every `.retrying` event.
    var retries: [String] {
        events.withLock { $0 }.compactMap {
            if case .retrying(_, _, _, let error, _, _) = $0 { return error.description }
            return nil
        }
    }
}

extension ItemResult {
    /// The failure's message, for tests that look for the words a user reads.
    var errorText: String? { error.map(\.description) }
    /// The notes as the user reads them.
    var noteTexts: [String] { notes.map(\.description) }
}
