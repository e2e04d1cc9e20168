#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport

/// A manifest folder for one test, and the means to run the built `syncr` in it.
final class Project: Sendable {
    let folder: TemporaryDirectory
    let binary: URL

    init() throws {
        folder = try TemporaryDirectory(prefix: "project")
        binary = try locateSyncrBinary()
    }

    var path: String { folder.path }

    /// Writes `syncr.yml` with the given downloads (each a YAML flow mapping) and defaults.
    func writeManifest(defaults: String = "{ retries: 3, timeout: 5s }", downloads: [String]) throws {
        var text = "version: 1\ndefaults: \(defaults)\ndownloads:\n"
        for d in downloads { text += "  - \(d)\n" }
        try text.write(to: folder.appending("syncr.yml"), atomically: true, encoding: .utf8)
    }

    /// Runs `syncr ARGS` in the project folder to completion.
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await runProcess(executable: binary.path, arguments: arguments,
                             environment: environment.merging(["NO_PROXY": "*", "no_proxy": "*"]) { a, _ in a },
                             cwd: folder.url, timeout: .seconds(120))
    }

    /// Runs `syncr ARGS` like `run`, under `umask` (a shell sets it and execs syncr): what a test
    /// expects of the modes of files syncr makes must not depend on the umask it inherited.
    func run(_ arguments: [String], umask: mode_t) async throws -> ProcessResult {
        try await runProcess(executable: "/bin/sh",
                             arguments: ["-c", "umask \(String(umask, radix: 8)) && exec \"$0\" \"$@\"", binary.path] + arguments,
                             environment: ["NO_PROXY": "*", "no_proxy": "*"], cwd: folder.url, timeout: .seconds(120))
    }

    /// Starts `syncr ARGS` in the background, with `environment` added to the test's.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = folder.url
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        // `launch` clears the signal mask the test thread carries, so the child takes signals.
        try launch(process)
        return ChildProcess(process)
    }

    /// A file of the project (e.g. a destination).
    func file(_ relative: String) -> URL { folder.appending(relative) }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: file(relative).path) }

    /// The cache records, decoded loosely (what tests look at): unfinished downloads' record
    /// files, and complete ones' lines in the journal (the last line of each key; none after a
    /// tombstone).
    func cacheStates() -> [[String: Any]] {
        let cache = folder.appending(".syncr/cache")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        let files: [[String: Any]] = names.filter { $0.hasSuffix(".state") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: cache.appendingPathComponent(name).path),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return object
        }
        let journal = FileManager.default.contents(atPath: cache.appendingPathComponent("records.journal").path) ?? Data()
        var lines: [String: [String: Any]] = [:]
        for line in String(decoding: journal, as: UTF8.self).split(separator: "\n").dropFirst() {
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 4 else { continue }
            let key = String(parts[0])
            lines[key] = try? JSONSerialization.jsonObject(with: Data(parts[3].utf8)) as? [String: Any]
        }
        return files + lines.values.map { $0 }
    }

    /// The bytes the cache records as durable for the only partial entry, if any.
    func recordedGoodBytes() -> Int? {
        cacheStates().first { ($0["complete"] as? Bool) != true }?["good"] as? Int
    }
}

/// Parses `--json` output.
func jsonObject(_ text: String) throws -> [String: Any] {
    let data = Data(text.utf8)
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw CocoaError(.propertyListReadCorrupt)
    }
    return object
}

func items(_ object: [String: Any]) -> [[String: Any]] {
    object["items"] as? [[String: Any]] ?? []
}
