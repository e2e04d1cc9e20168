#if canImport(Glibc)
import Glibc
#endif
import SyncrCore

/// `syncr report merge -o OUT FILE...`: the `--report` JSON files (or the `--junit` files) of a
/// manifest's shards, merged into one.
enum ReportCommand {
    static let help = """
    Usage: syncr report merge -o OUT FILE...

    Merges the reports that 'syncr apply --shard I/N' wrote on several machines into one:
    --report JSON files into one JSON report (entries in manifest order, totals summed, the
    shards listed under "shards"), or --junit files into one JUnit document (one test suite
    per shard, counts summed). The kind is told from the files. Reports of different
    manifests (told by the SHA-256 of the manifest's bytes), of different shard counts, or
    of overlapping shards are refused, naming the files. A shard whose report is missing
    is named in the merged file, which is written all the same, and makes it exit 1.

    Options:
      -o, --output OUT      The merged file to write (replaced in one step).
      -h, --help            Show this help.
    """

    static func options(_ line: ParsedLine) throws(UsageError) -> ReportMergeOptions {
        guard line.positionals.first == "merge" else {
            throw line.usage(line.positionals.first.map { "Unknown report command '\($0)': the one there is is 'merge'." }
                ?? "'report' needs 'merge': syncr report merge -o OUT FILE...")
        }
        guard let output = try line.name("--output", "a file name") else {
            throw line.usage("'report merge' needs -o OUT, the file to write.")
        }
        let inputs = Array(line.positionals.dropFirst())
        guard !inputs.isEmpty else { throw line.usage("'report merge' needs the report files to merge.") }
        return ReportMergeOptions(output: output, inputs: inputs)
    }

    static func run(_ options: ReportMergeOptions) -> Int32 {
        var texts: [(String, String)] = []
        for path in options.inputs {
            switch readText(path) {
            case .success(let text):
                texts.append((path, text))
            case .failure(let error):
                // A matrix job that died before writing its report leaves no file: said so.
                Output.err("syncr: error: cannot read \(path): \(String(cString: strerror(error.errno)))")
                return ExitCode.failures
            }
        }
        let junit = texts.map { $0.1.drop { $0 == " " || $0 == "\n" }.hasPrefix("<") }
        guard Set(junit).count == 1 else {
            let (xml, json) = (texts.indices.filter { junit[$0] }, texts.indices.filter { !junit[$0] })
            Output.err("syncr: error: cannot merge JUnit files (\(xml.map { texts[$0].0 }.joined(separator: ", "))) "
                + "with JSON reports (\(json.map { texts[$0].0 }.joined(separator: ", "))); merge each kind on its own")
            return ExitCode.failures
        }
        let merged: Result<MergedReport, MergeRefusal> = junit[0] ? JUnitMerge.merge(texts) : JSONReportMerge.merge(texts)
        switch merged {
        case .failure(let refusal):
            Output.err("syncr: error: \(refusal.message)")
            return ExitCode.failures
        case .success(let report):
            if let problem = ApplyOutput.write(report.text, to: options.output) {
                Output.err("syncr: error: cannot write \(options.output): \(problem)")
                return ExitCode.failures
            }
            Output.err("syncr: merged \(texts.count) report\(texts.count == 1 ? "" : "s") into \(options.output)")
            // Written all the same (it says what is missing), but the run it reports is not
            // whole: a shard's job that died before writing its report must not leave the
            // merge step green, as a failed entry does not.
            if let missing = report.missingShards {
                Output.err("syncr: error: \(missing); merge again with every shard's report "
                    + "(run again the shards whose jobs wrote none)")
                return ExitCode.failures
            }
            return ExitCode.success
        }
    }

    /// The file's text, or why it could not be read.
    static func readText(_ path: String) -> Result<String, FileError> {
        guard let file = fopen(path, "rb") else { return .failure(FileError(path: path, operation: "read", errno: errno)) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n > 0 { bytes += chunk[0..<n] }
            if n < chunk.count { break }
        }
        return ferror(file) == 0 ? .success(String(decoding: bytes, as: UTF8.self))
            : .failure(FileError(path: path, operation: "read", errno: errno))
    }
}

/// Why inputs cannot be merged, naming them.
struct MergeRefusal: Error {
    var message: String
}

/// What one input says about where it comes from.
struct ReportOriginOfFile {
    var file: String
    var manifestSHA256: String?
    var manifestPath: String?
    /// nil: the report covers the whole manifest.
    var shard: Shard?
    /// How the manifest was split (`hash`, or `bytes` with a lockfile); nil when not said.
    var method: String? = nil

    var shardText: String { shard.map { "shard \($0)" } ?? "the whole manifest (no --shard)" }

    /// The inputs sorted by shard, after checking they come from one manifest and their shards
    /// do not overlap; a warning names shards that are missing.
    static func check(_ origins: [ReportOriginOfFile]) -> Result<(sorted: [ReportOriginOfFile], warning: String?), MergeRefusal> {
        for o in origins where o.manifestSHA256 == nil {
            return .failure(MergeRefusal(message: "\(o.file) does not say which manifest it comes from; "
                + "write it with this syncr's 'apply --report' or '--junit'"))
        }
        let first = origins[0]
        if let other = origins.first(where: { $0.manifestSHA256 != first.manifestSHA256 }) {
            return .failure(MergeRefusal(message: "\(first.file) and \(other.file) come from different manifests "
                + "(\(first.manifestPath ?? "?") sha256 \(first.manifestSHA256!.prefix(12))…, "
                + "\(other.manifestPath ?? "?") sha256 \(other.manifestSHA256!.prefix(12))…)"))
        }
        for (i, a) in origins.enumerated() {
            for b in origins[(i + 1)...] {
                let overlap = a.shard == nil || b.shard == nil || a.shard == b.shard
                if overlap {
                    return .failure(MergeRefusal(message: "\(a.file) (\(a.shardText)) and \(b.file) (\(b.shardText)) overlap"))
                }
                if a.shard!.count != b.shard!.count {
                    return .failure(MergeRefusal(message: "\(a.file) is \(a.shardText) but \(b.file) is \(b.shardText): "
                        + "the shards of one run share their count"))
                }
                // Split two ways, the shards may both leave out an entry, which no check of the
                // items could see.
                if let x = a.method, let y = b.method, x != y {
                    return .failure(MergeRefusal(message: "\(a.file) was split by \(x) and \(b.file) by \(y): the shards of "
                        + "one run are split alike (run each with the same lockfile beside the manifest, or none)"))
                }
            }
        }
        let sorted = origins.sorted { ($0.shard?.index ?? 0) < ($1.shard?.index ?? 0) }
        guard let count = first.shard?.count else { return .success((sorted, nil)) }
        let present = Set(origins.compactMap { $0.shard?.index })
        let missingCount = count - present.count
        // Named up to ten (a count from a report may be huge: they are found lazily).
        let named = (1...count).lazy.filter { !present.contains($0) }.prefix(10).map { "\($0)/\(count)" }
        let more = missingCount > 10 ? " and \(missingCount - 10) more" : ""
        let warning = missingCount == 0 ? nil
            : "shard\(missingCount == 1 ? "" : "s") \(named.joined(separator: ", "))\(more) missing: "
              + "the merged report covers \(present.count) of \(count)"
        return .success((sorted, warning))
    }
}
