import Foundation
import SyncrTestSupport
import Testing
@testable import SyncrArchive

/// A fresh folder per test, removed at the end (tests run in parallel). Extractions go to
/// `staging`, three folders down (`<path>/outer/box/staging`), so that an escape up to three
/// levels lands inside the scratch folder, where `escaped()` finds it.
final class ZipScratch {
    let path: String
    var staging: String { path + "/outer/box/staging" }

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/syncr-archivetests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path + "/in", withIntermediateDirectories: true)
    }

    deinit {
        // Unpacked folders may be read-only; make them removable first.
        if let walker = FileManager.default.enumerator(atPath: path) {
            for case let rel as String in walker {
                var st = stat()
                if lstat(path + "/" + rel, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { chmod(path + "/" + rel, 0o755) }
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path for an input archive or source tree (beside the staging folder's parent, not in it).
    func input(_ name: String) -> String { path + "/in/" + name }

    /// Everything in the scratch folder, at any depth, outside `staging` and `in` (the folders
    /// that lead to `staging` aside): anything here escaped.
    func escaped() -> [String] {
        let expected: Set<String> = ["outer", "outer/box"]
        let inside = ["outer/box/staging", "in"]
        var found: [String] = []
        var pending = [""]
        while let folder = pending.popLast() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path + "/" + folder)) ?? []
            for name in names {
                let relative = folder.isEmpty ? name : folder + "/" + name
                if inside.contains(relative) { continue }
                if !expected.contains(relative) { found.append(relative) }
                var st = stat()
                if lstat(path + "/" + relative, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { pending.append(relative) }
            }
        }
        return found.sorted()
    }
}

/// Runs python3 with an inline script; the oracle for what an archive holds.
enum Python {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    @discardableResult
    static func run(_ script: String, _ arguments: String..., stdin: Data? = nil) throws -> Data {
        try run(script, arguments: arguments, stdin: stdin)
    }

    static func run(_ script: String, arguments: [String], stdin: Data? = nil) throws -> Data {
        try Shell.run(interpreter, ["-c", script] + arguments, stdin: stdin)
    }

    /// The interpreter itself: `python3` on PATH may be a version manager's shell-script shim
    /// that costs a third of a second per call.
    static let interpreter: String = {
        let found = (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"]))
            .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        return found.isEmpty ? "/usr/bin/python3" : found
    }()

    /// Runs the script and decodes its stdout as JSON.
    static func json<T: Decodable>(_ type: T.Type, _ script: String, _ arguments: String...) throws -> T {
        try json(type, script, arguments: arguments)
    }

    static func json<T: Decodable>(_ type: T.Type, _ script: String, arguments: [String]) throws -> T {
        try JSONDecoder().decode(type, from: run(script, arguments: arguments))
    }
}

enum Shell {
    /// Runs a program, returns its stdout; throws with stderr when it exits non-zero. stdin and
    /// stderr go through temporary files, so no pipe can fill up and block.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], stdin: Data? = nil, cwd: String? = nil) throws -> Data {
        let temp = FileManager.default.temporaryDirectory.path + "/syncr-shell-" + UUID().uuidString
        defer {
            try? FileManager.default.removeItem(atPath: temp + ".in")
            try? FileManager.default.removeItem(atPath: temp + ".err")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = makePipe()
        process.standardOutput = out
        _ = FileManager.default.createFile(atPath: temp + ".err", contents: nil)
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: temp + ".err"))
        process.standardError = errHandle
        if let stdin {
            _ = FileManager.default.createFile(atPath: temp + ".in", contents: stdin)
            process.standardInput = FileHandle(forReadingAtPath: temp + ".in")
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try launch(process)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errHandle.close()
        guard process.terminationStatus == 0 else {
            let err = (try? String(contentsOfFile: temp + ".err", encoding: .utf8)) ?? ""
            throw Python.Failure(description: "\((program as NSString).lastPathComponent) exited \(process.terminationStatus): \(err)")
        }
        return data
    }
}

/// Trees as Python's `os.lstat` sees them: relative path -> "dir", "link:TARGET" or
/// "file:SHA256" (the form the oracle writes). Hashing in Python keeps a debug build's tests fast.
enum Tree {
    static let walker = #"""
def snapshot(root):
    import os, hashlib, stat
    tree = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                tree[rel] = "link:" + os.readlink(full)
            elif stat.S_ISDIR(st.st_mode):
                tree[rel] = "dir"
            else:
                h = hashlib.sha256()
                with open(full, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                tree[rel] = "file:" + h.hexdigest()
    return tree

"""#

    /// One snapshot per root, in one Python run.
    static func snapshot(_ roots: String...) throws -> [[String: String]] {
        try Python.json([[String: String]].self,
                        walker + "import sys, json\nprint(json.dumps([snapshot(r) for r in sys.argv[1:]]))\n",
                        arguments: roots)
    }
}

/// The repository's own files.
enum Repository {
    static var root: String {
        // #filePath = <repo>/Tests/SyncrArchiveTests/ZipTestSupport.swift
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// The zip corpus (Tests/Corpus/zip/README.md says where it comes from).
    static var zipCorpus: String { root + "/Tests/Corpus/zip" }
}

/// Unpacks with syncr, returning the summary or the error.
func unpack(_ archive: String, into staging: String, strip: Int = 0,
            limits: ExtractionLimits = ExtractionLimits()) -> Result<ZipExtractionSummary, ArchiveError> {
    do throws(ArchiveError) {
        return .success(try ZipExtractor.extract(archiveAt: archive, into: staging,
                                                 archiveName: (archive as NSString).lastPathComponent,
                                                 stripComponents: strip, limits: limits))
    } catch {
        return .failure(error)
    }
}

extension ArchiveError {
    /// The entry the error names, if any.
    var entry: String? {
        switch self {
        case .corrupt(_, let entry, _), .unsupported(_, let entry, _), .limit(_, let entry, _): return entry
        case .checksum(_, let entry, _), .unsafePath(_, let entry, _), .duplicate(_, let entry, _, _, _): return entry
        case .stripped(_, let entry, _, _): return entry
        case .io, .interrupted: return nil
        }
    }
}
