#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SyncrTestSupport
import Testing
@testable import SyncrArchive

/// A scratch folder for one test, `<tmp>/syncr-tar-<test>-<uuid>`, named after the test so
/// leftovers are easy to trace; removed when the value goes away.
final class Scratch {
    let path: String

    init(_ test: String = #function) throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let name = test.prefix { $0 != "(" }
        path = "\(base)/syncr-tar-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the scratch folder.
    func at(_ relative: String) -> String { path + "/" + relative }

    /// Creates a folder (and its parents) inside the scratch folder.
    @discardableResult
    func folder(_ relative: String) throws -> String {
        try FileManager.default.createDirectory(atPath: at(relative), withIntermediateDirectories: true)
        return at(relative)
    }

    deinit {
        // Read-only folders left by tar must become writable before they can be removed.
        _ = try? run("chmod", ["-R", "u+rwx", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}

struct CommandFailed: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var stderr: String
    var description: String { "\(command) exited \(status): \(stderr)" }
}

/// Runs a program (looked up on PATH) and returns its stdout; throws when it exits non-zero.
@discardableResult
func run(_ program: String, _ arguments: [String], cwd: String? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [program] + arguments
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    let out = makePipe(), err = makePipe()
    process.standardOutput = out
    process.standardError = err
    try launch(process)
    // Drain stderr on another thread so neither pipe can fill up and block the child.
    let errData = LockedData()
    let drain = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    drain.start()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errData.done { usleep(1000) }
    guard process.terminationStatus == 0 else {
        throw CommandFailed(command: ([program] + arguments).joined(separator: " "),
                            status: process.terminationStatus,
                            stderr: String(decoding: errData.value, as: UTF8.self))
    }
    return String(decoding: output, as: UTF8.self)
}

/// Collects a pipe's bytes from another thread.
final class LockedData: @unchecked Sendable {
    // Guarded by `lock`; written once by the draining thread, read after `done`.
    private let lock = NSLock()
    private var data = Data()
    private var finished = false
    func set(_ value: Data) { lock.withLock { data = value; finished = true } }
    var done: Bool { lock.withLock { finished } }
    var value: Data { lock.withLock { data } }
}

/// Python helpers every fixture script starts with: `add` writes one entry of any type and name
/// (tarfile checks neither), `entry` builds a TarInfo.
let pythonPrelude = """
import io, os, sys, tarfile, gzip
def entry(name, type=tarfile.REGTYPE, data=b"", linkname="", mode=0o644, **fields):
    info = tarfile.TarInfo(name)
    info.type = type
    info.linkname = linkname
    info.mode = mode
    info.mtime = fields.pop("mtime", 1_700_000_000)
    info.size = len(data) if type == tarfile.REGTYPE else 0
    for key, value in fields.items():
        setattr(info, key, value)
    return info
def add(t, name, type=tarfile.REGTYPE, data=b"", linkname="", mode=0o644, **fields):
    info = entry(name, type, data, linkname, mode, **fields)
    t.addfile(info, io.BytesIO(data) if type == tarfile.REGTYPE else None)

"""

/// Runs a Python fixture script (after `pythonPrelude`) in `cwd`.
func python(_ script: String, cwd: String) throws {
    try run("python3", ["-c", pythonPrelude + script], cwd: cwd)
}

/// A file tree as tar would leave it: what is compared between syncr and `tar xf`.
struct Tree: Equatable, CustomStringConvertible {
    enum Node: Equatable {
        case file(bytes: Data, executable: Bool, mtime: Int)
        case directory
        case symlink(target: String)
    }

    var nodes: [String: Node] = [:]
    /// Groups of paths that are one file (hard links), each sorted.
    var hardLinkGroups: Set<[String]> = []

    init(_ root: String) throws {
        var inodes: [UInt64: [String]] = [:]
        func walk(_ relative: String) throws {
            let full = relative.isEmpty ? root : root + "/" + relative
            for name in try FileManager.default.contentsOfDirectory(atPath: full).sorted() {
                let path = relative.isEmpty ? name : relative + "/" + name
                var st = stat()
                guard lstat(root + "/" + path, &st) == 0 else { throw CommandFailed(command: "lstat \(path)", status: errno, stderr: "") }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    nodes[path] = .directory
                    try walk(path)
                case S_IFLNK:
                    nodes[path] = .symlink(target: try FileManager.default.destinationOfSymbolicLink(atPath: root + "/" + path))
                default:
                    let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
                    nodes[path] = .file(bytes: data, executable: st.st_mode & 0o100 != 0, mtime: st.st_mtim.tv_sec)
                    if st.st_nlink > 1 { inodes[UInt64(st.st_ino), default: []].append(path) }
                }
            }
        }
        try walk("")
        hardLinkGroups = Set(inodes.values.map { $0.sorted() })
    }

    var description: String {
        nodes.keys.sorted().map { key -> String in
            switch nodes[key]! {
            case .file(let bytes, let executable, let mtime): return "\(key) file \(bytes.count)B x=\(executable) t=\(mtime)"
            case .directory: return "\(key)/"
            case .symlink(let target): return "\(key) -> \(target)"
            }
        }.joined(separator: "\n") + "\nhard links: \(hardLinkGroups.sorted { $0.description < $1.description })"
    }
}

/// Names in a folder.
func listing(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

/// Collects entries (and file bytes) as TarReader reports them.
final class EntryCollector: TarEntryHandler {
    var entries: [TarEntry] = []
    var contents: [String: [UInt8]] = [:]
    func begin(_ entry: TarEntry) throws(ArchiveError) { entries.append(entry) }
    func data(_ bytes: UnsafeRawBufferPointer, of entry: TarEntry) throws(ArchiveError) {
        contents[entry.name, default: []].append(contentsOf: bytes)
    }
    func end(_ entry: TarEntry) throws(ArchiveError) {}
}

/// Writes bytes to a file.
func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// A file's bytes.
func bytes(of path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}
