#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing

/// What `apply` asks of the disk, counted by strace(1) in the real binary: each finished file is
/// flushed on its own and the whole file system never is, and `fsync: false` / `--no-fsync`
/// flush nothing at all.
@Suite("durability", .timeLimit(.minutes(5)))
struct DurabilityTests {
    /// The flush calls one `syncr ARGS` made, by name (`fdatasync`, `fsync`, `syncfs`, `sync`),
    /// over every thread.
    func flushCalls(_ project: Project, _ arguments: [String]) async throws -> [String: Int] {
        let log = project.folder.appending("strace.log")
        let result = try await runProcess(
            executable: "/usr/bin/strace",
            arguments: ["-f", "-qq", "-e", "trace=fdatasync,fsync,syncfs,sync", "-o", log.path,
                        project.binary.path] + arguments,
            environment: tracedEnvironment(), cwd: project.folder.url, timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result.stderr)")
        let flushes: Set<Substring> = ["fdatasync", "fsync", "syncfs", "sync"]
        var counts: [String: Int] = [:]
        for line in try String(contentsOf: log, encoding: .utf8).split(separator: "\n") {
            // "1234  fdatasync(7)             = 0", or "<unfinished ...>" halves of one call.
            // strace names a call "???" when it cannot tell which one a thread was in (seen
            // once in CI, in a `--no-fsync` run, as the only line): only named flushes count.
            guard !line.contains("resumed>"),
                  let name = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first?
                      .split(separator: "(").first,
                  flushes.contains(name) else { continue }
            counts[String(name), default: 0] += 1
        }
        return counts
    }

    func servedProject(files: Int) async throws -> (Project, Nginx, TemporaryDirectory) {
        let www = try TemporaryDirectory(prefix: "www")
        var downloads: [String] = []
        for i in 0..<files {
            try makeFile(path: www.appending("f\(i).bin"), size: 20_000 + i, seed: UInt64(i + 1))
        }
        let nginx = try await Nginx.start(root: www.url)
        for i in 0..<files { downloads.append("{ url: \(nginx.url("/f\(i).bin")), to: out/f\(i).bin }") }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 3, timeout: 5s, jobs: 4 }", downloads: downloads)
        return (project, nginx, www)
    }

    /// Every one of 12 small files is flushed by itself before it is moved into place, and no
    /// call flushes the whole file system (the former group flush used `syncfs`, which also
    /// writes back every other program's dirty pages).
    @Test func eachFileIsFlushedOnItsOwnAndTheFileSystemNever() async throws {
        let (project, nginx, www) = try await servedProject(files: 12)
        defer { nginx.stop() }
        let calls = try await flushCalls(project, ["apply", "--quiet"])
        #expect(calls["syncfs", default: 0] == 0, "\(calls)")
        #expect(calls["sync", default: 0] == 0, "\(calls)")
        #expect(calls["fdatasync", default: 0] >= 12, "one flush per file at least: \(calls)")
        #expect(calls["fsync", default: 0] >= 1, "the destination folder is flushed: \(calls)")
        for i in 0..<12 {
            #expect(try await sha256(file: project.file("out/f\(i).bin"))
                == (try await sha256(file: www.appending("f\(i).bin"))))
        }
    }

    /// A cache in memory (tmpfs) is not flushed: nothing there survives a power loss anyway.
    /// What leaves it for a disk is: each file copied beside its destination is flushed before
    /// it is renamed into place. So 6 files cost 6 flushes, the copies', and not 12.
    @Test(.enabled(if: fileSystemType("/dev/shm") == "tmpfs", "needs /dev/shm on tmpfs"))
    func aCacheInMemoryIsNotFlushedButCopiesOntoADiskAre() async throws {
        let (project, nginx, www) = try await servedProject(files: 6)
        defer { nginx.stop() }
        try #require(fileSystemType(project.path) != "tmpfs", "the project folder must be on a disk")
        let cache = "/dev/shm/syncr-test-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let calls = try await flushCalls(project, ["apply", "--quiet", "--cache", cache])
        #expect(calls["fdatasync", default: 0] == 6, "one flush per copy onto the disk, none in the cache: \(calls)")
        #expect(calls["fsync", default: 0] >= 1, "the destination folder is flushed: \(calls)")
        for i in 0..<6 {
            #expect(try await sha256(file: project.file("out/f\(i).bin"))
                == (try await sha256(file: www.appending("f\(i).bin"))))
        }
    }

    /// `--no-fsync` and `fsync: false` flush nothing, yet every file arrives whole; the plan says
    /// that flushing is off, in text and JSON.
    @Test(arguments: [true, false])
    func flushingOffFlushesNothing(byOption: Bool) async throws {
        let (project, nginx, www) = try await servedProject(files: 6)
        defer { nginx.stop() }
        if !byOption {
            var downloads: [String] = []
            for i in 0..<6 { downloads.append("{ url: \(nginx.url("/f\(i).bin")), to: out/f\(i).bin }") }
            try project.writeManifest(defaults: "{ retries: 3, timeout: 5s, fsync: false }", downloads: downloads)
        }
        let extra = byOption ? ["--no-fsync"] : []
        let plan = try await project.run(["plan"] + extra)
        #expect(plan.exitCode == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("note: fsync is off"), "\(plan.stdout)")
        let json = try await project.run(["plan", "--json"] + extra)
        #expect(json.stdout.contains("\"fsync\":false") || json.stdout.contains("\"fsync\": false"), "\(json.stdout)")

        let calls = try await flushCalls(project, ["apply", "--quiet"] + extra)
        #expect(calls.values.reduce(0, +) == 0, "nothing is flushed: \(calls)")
        for i in 0..<6 {
            #expect(try await sha256(file: project.file("out/f\(i).bin"))
                == (try await sha256(file: www.appending("f\(i).bin"))))
        }
        let again = try await project.run(["plan"] + extra)
        #expect(again.stdout.contains("6 up to date"), "\(again.stdout)")
    }

    /// Without the option the plan says nothing about flushing, and its JSON says it is on.
    @Test func flushingOnIsTheDefault() async throws {
        let (project, nginx, _) = try await servedProject(files: 1)
        defer { nginx.stop() }
        let plan = try await project.run(["plan"])
        #expect(!plan.stdout.contains("fsync"), "\(plan.stdout)")
        let json = try await project.run(["plan", "--json"])
        #expect(json.stdout.contains("\"fsync\":true") || json.stdout.contains("\"fsync\": true"), "\(json.stdout)")
    }
}

/// The environment for a syncr run under a tracer (strace, gdb): this process's, without proxies,
/// and with LeakSanitizer off in a sanitizer build, since it cannot work under ptrace (memory
/// errors are still checked).
func tracedEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["NO_PROXY"] = "*"
    environment["no_proxy"] = "*"
    let asan = environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
    environment["ASAN_OPTIONS"] = asan + "detect_leaks=0"
    return environment
}

/// The type of the file system `path` is on, as `stat -f` names it ("tmpfs", "ext2/ext3", ...).
func fileSystemType(_ path: String) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
    process.arguments = ["-f", "-c", "%T", path]
    let pipe = makePipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? launch(process)) != nil else { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try? pipe.fileHandleForReading.close()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
