import Foundation
import SyncrTestSupport
import Testing

/// A unique folder under the temp dir, removed on `remove()` or when the object goes away.
/// Every test makes its own: Swift Testing runs tests in parallel.
final class Scratch: Sendable {
    let path: String

    init(_ prefix: String) throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        path = base + "/syncr-zipwriter-\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { remove() }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// `path/relative`, after creating its parent folders.
    func file(_ relative: String) throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        return full
    }

    func write(_ relative: String, _ data: Data, mode: Int = 0o644) throws {
        let full = try file(relative)
        try data.write(to: URL(fileURLWithPath: full))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: full)
    }
}

/// Runs `work` on a thread of its own and waits for it without holding one of the threads of
/// Swift concurrency's pool. That pool has one thread per core (two on CI); a test computing
/// on it for a minute stalls every test in the process that awaits meanwhile, and a test
/// that waits for a child process to reach some point can then miss it. Long synchronous work
/// (gigabytes through the zip writer, tens of thousands of files) goes through here; the
/// expectations stay on the test's task, where Swift Testing attributes them.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result(catching: work)) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

struct ProcessOutput: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program to completion; output goes through files so a large listing cannot fill a
/// pipe and stall it.
@discardableResult
func run(_ executable: String, _ arguments: [String], cwd: String? = nil,
         environment: [String: String]? = nil) throws -> ProcessOutput {
    let scratch = try Scratch("proc")
    let outPath = scratch.path + "/out", errPath = scratch.path + "/err"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    if let environment {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    process.standardOutput = out
    process.standardError = err
    try launch(process)
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ProcessOutput(status: process.terminationStatus,
                         stdout: try String(contentsOfFile: outPath, encoding: .utf8),
                         stderr: try String(contentsOfFile: errPath, encoding: .utf8))
}

/// Runs a Python script given as text, with arguments.
@discardableResult
func python(_ script: String, _ arguments: [String]) throws -> ProcessOutput {
    try run("/usr/bin/env", ["python3", "-c", script] + arguments)
}

enum Scripts {
    /// One line per path under a root, sorted: kind, executable bit, and the SHA-256 of a
    /// file's bytes or a link's target. Folders are listed too, so an empty one counts.
    static let manifest = #"""
import hashlib, os, stat, sys
root = sys.argv[1]
lines = []
for dirpath, dirnames, filenames in os.walk(root):
    for name in dirnames + filenames:
        full = os.path.join(dirpath, name)
        rel = os.path.relpath(full, root)
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            lines.append(f"link {rel} -> {os.readlink(full)}")
        elif stat.S_ISDIR(st.st_mode):
            lines.append(f"dir  {rel}")
        else:
            with open(full, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            lines.append(f"file {rel} x={bool(st.st_mode & 0o100)} {digest}")
print("\n".join(sorted(lines)))
"""#

    /// Extracts with Python's zipfile, honouring the Unix mode in the external attributes
    /// (links and permissions), which `extractall` ignores.
    static let extract = #"""
import os, stat, sys, zipfile
archive, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(archive) as z:
    for info in z.infolist():
        mode = info.external_attr >> 16
        path = os.path.join(dest, info.filename)
        if info.is_dir():
            os.makedirs(path, exist_ok=True)
        elif stat.S_ISLNK(mode):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(z.read(info).decode(), path)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(z.read(info))
            os.chmod(path, stat.S_IMODE(mode))
"""#

    /// One line per entry: name, method, sizes, date_time, create_system, flag bits, extra.
    static let list = #"""
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        print(i.filename, i.compress_type, i.file_size, i.compress_size, "%04d-%02d-%02dT%02d:%02d:%02d" % i.date_time,
              i.create_system, i.flag_bits, i.extra.hex() or "-", oct(i.external_attr >> 16), sep="\t")
"""#
}

/// Bytes that compress well but not trivially: numbered lines of text.
func compressibleData(megabytes: Int) -> Data {
    var text = ""
    text.reserveCapacity(megabytes << 20)
    var i = 0
    while text.utf8.count < megabytes << 20 {
        text += "line \(i): the quick brown fox jumps over the lazy dog \(i % 97) \(i * 7919 % 10007)\n"
        i += 1
    }
    return Data(text.utf8.prefix(megabytes << 20))
}

/// Bytes that do not compress: a seeded xorshift stream, so runs are repeatable.
func randomData(bytes: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
    var state = seed
    var data = Data(count: bytes)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in 0..<(bytes / 8) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            words[i] = state
        }
    }
    return data
}

/// Whether `data` contains the 4 bytes of `signature`, little-endian.
func contains(_ data: Data, signature: UInt32) -> Bool {
    let needle = Data([UInt8(signature & 0xFF), UInt8(signature >> 8 & 0xFF), UInt8(signature >> 16 & 0xFF), UInt8(signature >> 24)])
    return data.range(of: needle) != nil
}
