#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and validates syncr manifests.
public enum ManifestLoader {
    /// The largest manifest read: a mistyped path to a device or a log would otherwise be read
    /// until memory ran out (`/dev/zero` ended in a crash).
    public static let maximumSize = 64 << 20

    /// Reads and parses the manifest file at `path`.
    ///
    /// - Parameters:
    ///   - path: the file as given on the command line; used verbatim in messages. Relative paths
    ///     (and the folder relative `to:` paths resolve against) start at the current directory.
    ///   - environment: variables for `${VAR}` references.
    ///   - headersUnexpanded: a header's value may reference variables that are not set, and is
    ///     then kept as written: for a command that sends no request (`syncr cache`), run where
    ///     the secrets are not.
    /// - Throws: `ManifestError` with every problem found, or one file-level diagnostic when the
    ///   file cannot be read.
    /// - Parameter read: given the file's bytes before they are parsed, for what must name
    ///   exactly those (a report's manifest SHA-256: the file may change while a run goes on).
    /// - Parameter cacheFolderProblem: for a run that uses the manifest's cache: what keeps the
    ///   cache folder (given absolute) from being one, reported at `cache:` (a file there).
    public static func load(path: String, environment: [String: String],
                            headersUnexpanded: Bool = false, read: (([UInt8]) -> Void)? = nil,
                            cacheFolderProblem: ((String) -> String?)? = nil) throws(ManifestError) -> Manifest
    {
        let bytes: [UInt8]
        switch FileBytes.contents(of: path, limit: maximumSize) {
        case .success(let b):
            bytes = b
        case .failure(let failure):
            let hint: String? = switch failure.code {
            case ENOENT where path == "-": "syncr reads the manifest from a file; for standard input, name /dev/stdin"
            case ENOENT: "name another file, or write one (examples/quickstart/syncr.yml is a start; see man syncr-manifest)"
            case EFBIG: "is it the right file? A manifest of 100,000 entries is about 10 MiB"
            case EISDIR: "name the manifest file itself, not its folder"
            default: nil
            }
            throw ManifestError(diagnostics: [
                Diagnostic(file: path, location: nil, path: "",
                           message: "cannot read the manifest: \(failure.message)",
                           sourceLine: nil, hint: hint),
            ])
        }
        read?(bytes)
        let directory = LexicalPath.resolve(LexicalPath.parent(of: path),
                                            against: FileBytes.currentDirectory())
        return try parse(bytes: bytes, path: path, directory: directory, environment: environment,
                         headersUnexpanded: headersUnexpanded, cacheFolderProblem: cacheFolderProblem)
    }

    /// Parses manifest text.
    ///
    /// - Parameters:
    ///   - text: the manifest.
    ///   - path: the file name used in messages.
    ///   - directory: the absolute folder relative paths resolve against (normalized here).
    ///   - environment: variables for `${VAR}` references.
    /// - Throws: `ManifestError` with every problem found, sorted by position.
    public static func parse(text: String, path: String, directory: String,
                             environment: [String: String]) throws(ManifestError) -> Manifest
    {
        try parse(bytes: Array(text.utf8), path: path, directory: directory, environment: environment)
    }

    static func parse(bytes: [UInt8], path: String, directory: String, environment: [String: String],
                      headersUnexpanded: Bool = false, cacheFolderProblem: ((String) -> String?)? = nil) throws(ManifestError) -> Manifest
    {
        let text = String(decoding: bytes, as: UTF8.self)
        var decoder = ManifestDecoder(file: path, text: text,
                                      directory: LexicalPath.resolve(
                                          directory, against: FileBytes.currentDirectory()),
                                      environment: environment)
        decoder.headersUnexpanded = headersUnexpanded
        decoder.cacheFolderProblem = cacheFolderProblem
        // libyaml reads UTF-16 too, but every message would then quote the lines' raw bytes
        // (NULs between the letters), and every other tool expects UTF-8.
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw ManifestError(diagnostics: [Diagnostic(file: path, location: nil, path: "",
                message: "the manifest is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8",
                sourceLine: nil, hint: nil)])
        }
        let (root, brokenAliases) = try parse(bytes, decoder: &decoder)
        decoder.reportBrokenAliases(brokenAliases)
        guard let manifest = decoder.decodeManifest(root) else {
            throw ManifestError(diagnostics: decoder.diagnostics)
        }
        return manifest
    }

    /// The tree of `bytes`, and the aliases found to name no anchor; a syntax error is reported
    /// with those and thrown. The parser (its copy of the text, libyaml's buffers) is gone once
    /// this returns: held while the tree was decoded, it raised the peak of a 20,000-entry
    /// manifest by 2.5 MiB.
    private static func parse(_ bytes: [UInt8], decoder: inout ManifestDecoder) throws(ManifestError)
        -> (YAMLNode?, [YAMLSyntaxError]) {
        let parser = YAMLParser(bytes: bytes)
        do {
            return (try parser.parseDocument(), parser.brokenAliases)
        } catch {
            // libyaml's reader refuses bytes that are not UTF-8, with a message that does not
            // say so in words a user acts on: "invalid ... UTF-8 octet", or "invalid Unicode
            // character" for a surrogate encoded as UTF-8 (ED A0 80, as CESU-8 writes) or a
            // character beyond U+10FFFF.
            let encoding = error.message.contains("UTF-8") || error.message.contains("invalid Unicode character")
            if !(encoding && decoder.reportNotUTF8(in: bytes)) {
                decoder.report("", at: error.mark, error.message,
                               hint: decoder.unusualBreakHint() ?? decoder.tabHint(for: error.message, at: error.mark))
            }
            // libyaml's parser stops at a syntax error for good (every later call returns the
            // same error), and an alias bomb is not expanded: nothing after it is read. The
            // aliases found broken before it are reported with it (after it: nothing at a
            // broken alias's place is reported once they are).
            decoder.reportBrokenAliases(parser.brokenAliases)
            throw ManifestError(diagnostics: decoder.diagnostics)
        }
    }
}

/// Whole-file reads with POSIX calls, so the module needs no Foundation.
enum FileBytes {
    struct Failure: Error {
        var code: Int32
        var message: String
    }

    /// The whole file, or `EFBIG` once it holds more than `limit` bytes.
    static func contents(of path: String, limit: Int = .max) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(failure()) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(failure())
            }
            if n == 0 { return .success(bytes) }
            guard bytes.count + n <= limit else {
                return .failure(Failure(code: EFBIG, message: "larger than \(limit >> 20) MiB"))
            }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }

    static func currentDirectory() -> String {
        guard let p = getcwd(nil, 0) else { return "/" }
        defer { free(p) }
        return String(cString: p)
    }

    private static func failure() -> Failure {
        let code = errno
        return Failure(code: code, message: String(cString: strerror(code)))
    }
}
