#if canImport(Glibc)
import Glibc
#endif

/// A private scratch folder for one fuzzing process, made once and reused by every input.
///
/// Each input gets `<scratch>/work/` fresh: the targets write the input there and unpack into
/// `<scratch>/work/stage/`; anything that appears elsewhere in `work/` escaped the staging folder.
public enum Scratch {
    public nonisolated(unsafe) static let root: String = {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/syncr-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatal("cannot create a scratch folder in \(base)") }
        let path = String(cString: made)
        atexit { Scratch.remove(Scratch.root) }
        return path
    }()

    /// Empties and recreates `<root>/work`, returning its path.
    public static func freshWork() -> String {
        let work = root + "/work"
        remove(work)
        guard mkdir(work, 0o700) == 0 else { fatal("cannot create \(work)") }
        return work
    }

    /// Writes `bytes` to a new file at `path`.
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatal("cannot create \(path)") }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            guard n > 0 else { fatal("cannot write \(path)") }
            done += n
        }
    }

    /// The names in a folder, without `.` and `..`.
    public static func names(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // In place: `entry.pointee` would copy a whole dirent, past the end of the buffer.
            let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes a file, link or folder tree without following links.
    public static func remove(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            chmod(path, 0o700)
            for name in names(in: path) { remove(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Stops the process: the harness itself failed, not the code under test.
    public static func fatal(_ message: String) -> Never {
        printError("fuzz harness: \(message): \(String(cString: strerror(errno)))\n")
        exit(2)
    }
}

/// A crash that libFuzzer records: an invariant of the code under test does not hold.
public func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        printError("invariant failed at \(file):\(line): \(message())\n")
        abort()
    }
}

/// Writes to standard error unbuffered.
func printError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = Glibc.write(2, bytes.baseAddress, bytes.count) }
}
