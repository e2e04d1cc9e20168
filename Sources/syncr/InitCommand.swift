#if canImport(Glibc)
import Glibc
#endif

/// `syncr init [FILE]`: writes a commented starter manifest, never over an existing file.
enum InitCommand {
    static let help = """
    Usage: syncr init [FILE]

    Writes a commented starter manifest to FILE (default: syncr.yml in the current folder;
    FILE/syncr.yml when FILE is a folder or ends in /): one download that works as written,
    and every other key shown in comments. It validates as written and needs no environment
    variable. An existing FILE is never replaced.

    Options:
      -h, --help            Show this help.
    """

    static func options(_ line: ParsedLine) throws(UsageError) -> InitOptions {
        if line.positionals.count > 1 {
            throw line.usage("Unexpected argument '\(line.positionals[1])': give one file name.")
        }
        return InitOptions(path: line.positionals.first ?? "syncr.yml")
    }

    static func run(_ options: InitOptions) -> Int32 {
        let path = manifestPath(options.path)
        switch write(starter, to: path) {
        case .written:
            // The commands that follow read syncr.yml in the current folder unless told another.
            let named = path == "syncr.yml" ? "" : " " + commandWord(path)
            Output.err("syncr: wrote \(path); check it with 'syncr validate\(named)', "
                + "then 'syncr plan\(named)' and 'syncr apply\(named)'.")
            return ExitCode.success
        case .exists:
            Output.err("syncr: error: \(path) already exists; init never replaces a manifest. "
                + "Remove it first, or name another file: syncr init other.yml")
            return ExitCode.failures
        case .failed(let operation, let code):
            Output.err("syncr: error: \(path): cannot \(operation): \(String(cString: strerror(code)))"
                + (code == ENOENT ? " (create its folder first)" : ""))
            return ExitCode.failures
        }
    }

    enum Outcome { case written, exists, failed(String, Int32) }

    /// `path` as a word of the commands suggested (shown inside single quotes): as is when a
    /// shell leaves it alone, else in double quotes, with `"`, `\`, `$` and `` ` `` escaped.
    static func commandWord(_ path: String) -> String {
        let plain = path.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || "-_./:@%+=,".utf8.contains(byte)
        }
        if plain { return path }
        var quoted = "\""
        for c in path.unicodeScalars {
            if "\"\\$`".unicodeScalars.contains(c) { quoted += "\\" }
            quoted.unicodeScalars.append(c)
        }
        return quoted + "\""
    }

    /// Where the manifest goes: `path`, or `syncr.yml` in it when it names a folder (one that
    /// exists, or any written with a trailing `/`), as `git init DIR` works in DIR. A folder
    /// was taken for a manifest that "already exists".
    static func manifestPath(_ path: String) -> String {
        var st = stat()
        guard path.hasSuffix("/") || (stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR) else { return path }
        return (path.hasSuffix("/") ? path : path + "/") + "syncr.yml"
    }

    /// Writes a temporary file beside `path`, then hard-links it to `path`: `link` fails when
    /// the name exists, so the file appears whole or not at all and is never written over, even
    /// when two `init`s race.
    static func write(_ text: String, to path: String) -> Outcome {
        var st = stat()
        if lstat(path, &st) == 0 { return .exists }
        let temp = path + ".init-\(getpid()).tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return .failed("create", errno) }
        defer { unlink(temp) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                return .failed("write", code)
            }
            bytes = bytes.dropFirst(n)
        }
        close(fd)
        if link(temp, path) != 0 {
            return errno == EEXIST ? .exists : .failed("create", errno)
        }
        return .written
    }

    /// The starter manifest. Every value shown is the default unless the comment says otherwise;
    /// `DocsTests` checks that it validates, and `syncr-manifest(5)` describes each key.
    static let starter = """
    # syncr manifest: what to download and upload. Check it with `syncr validate`, see what
    # would happen with `syncr plan`, do it with `syncr apply`. Every key: man syncr-manifest.
    version: 1

    # The cache folder (partial downloads, records of what was fetched and sent), relative to
    # this file's folder. Add it to .gitignore.
    cache: .syncr/cache

    # Settings for every entry; each entry may override all but jobs, max_connections_per_host
    # and fsync.
    defaults:
      jobs: 4                       # files in flight at once
      retries: 5                    # retries of attempts that made no progress
      timeout: 30s                  # connect timeout; a transfer stalled this long is retried
      # max_connections_per_host: 16
      # fsync: false                # flush nothing: safe if syncr is killed, not against power loss
      # connections: 8              # parallel Range requests for one large file
      # min_split: 16MiB            # files at least this large are split across connections
      # low_speed: 1KiB/s           # slower than this for `timeout`: drop and retry
      # headers: { User-Agent: "syncr" }

    downloads:
      # A file, fetched only when missing or changed, resumed when cut off.
      - url: https://example.com/
        to: downloads/example.html
        # sha256: <64 hex digits>     # or md5: <32 hex digits>; a mismatch is never installed

      # An archive unpacked into a folder, replaced in one step when complete:
      # - url: https://example.com/releases/tool-1.2.tar.gz
      #   to: vendor/tool
      #   unzip: true               # zip, tar, tar.gz
      #   strip_components: 1
      #   max_unpacked_size: 2GiB   # default: what fits in the free space

      # A token from the environment: `${VAR}` expands in URLs and header values, is never
      # printed, and must be set (or given a default: `${VAR:-}`) for the manifest to be valid.
      # - url: https://ci.example.com/artifacts/build.zip
      #   to: artifacts/build.zip
      #   headers: { Authorization: "Bearer ${ARTIFACT_TOKEN}" }

    # uploads:
    #   - from: build/app.tar       # a file or a folder, relative to this file's folder
    #     to: https://uploads.example.com/api/upload
    #     method: post              # post (multipart form, the default) or put
    #     field: file               # the form field of the file part
    #     fields: { channel: nightly }
    #     headers: { Authorization: "Bearer ${UPLOAD_TOKEN}" }

    """
}
