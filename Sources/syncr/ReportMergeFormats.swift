import SyncrCore

/// A merged report, and the shards it lacks as its warning says them ("shard 3/3 missing: ...").
struct MergedReport {
    var text: String
    var missingShards: String?
}

/// Merges `--report` JSON files: items in manifest order, totals summed, the shards listed.
enum JSONReportMerge {
    static func merge(_ texts: [(String, String)]) -> Result<MergedReport, MergeRefusal> {
        var documents: [(ReportOriginOfFile, JSON)] = []
        for (file, text) in texts {
            let root: JSON
            do {
                root = try JSONParser.parse(text)
            } catch {
                return .failure(MergeRefusal(message: "\(file) is not JSON: \(error)"))
            }
            guard root["version"]?.intValue == 1, root["items"]?.arrayValue != nil, root["totals"] != nil else {
                return .failure(MergeRefusal(message: "\(file) is not a syncr --report file (version 1, items, totals)"))
            }
            let shard = root["shard"].flatMap { s in
                s["index"]?.intValue.flatMap { i in s["count"]?.intValue.flatMap { Shard(index: Int(i), count: Int($0)) } }
            }
            documents.append((ReportOriginOfFile(file: file, manifestSHA256: root["manifest"]?["sha256"]?.stringValue,
                                                 manifestPath: root["manifest"]?["path"]?.stringValue, shard: shard,
                                                 method: root["shard"]?["method"]?.stringValue), root))
        }
        let checked: (sorted: [ReportOriginOfFile], warning: String?)
        switch ReportOriginOfFile.check(documents.map(\.0)) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let c): checked = c
        }
        var items: [(key: ItemKey, file: String, value: JSON)] = []
        for (origin, root) in documents {
            for item in root["items"]!.arrayValue! {
                items.append((ItemKey(item), origin.file, item))
            }
        }
        items.sort { $0.key < $1.key }
        for (a, b) in zip(items, items.dropFirst()) where a.key == b.key {
            return .failure(MergeRefusal(message: "\(a.file) and \(b.file) both report \(a.key): their shards overlap"))
        }
        let byFile = Dictionary(documents.map { ($0.0.file, $0.1) }, uniquingKeysWith: { a, _ in a })
        let shards: [JSON] = checked.sorted.compactMap { origin in
            guard case .object(let pairs)? = byFile[origin.file]?["shard"] else { return nil }
            return .object(pairs + [("file", .string(origin.file))])
        }
        let merged = JSON.object([
            ("version", .int(1)),
            ("manifest", documents[0].1["manifest"] ?? .null),
            ("shards", .array(shards)),
            ("items", .array(items.map(\.value))),
            ("totals", sum(documents.map { $0.1["totals"]! })),
            // Each shard's own, in shard order (reports of older syncr versions have none), a
            // warning every shard gave (an unreadable netrc) once, and the shards missing: a
            // job that died before writing its report must not publish as a whole run.
            ("warnings", .array(Self.once(checked.sorted.flatMap { byFile[$0.file]?["warnings"]?.arrayValue ?? [] })
                + (checked.warning.map { [Self.missingShardsWarning($0)] } ?? []))),
        ])
        return .success(MergedReport(text: merged.rendered + "\n", missingShards: checked.warning))
    }

    /// `warnings` without repeats, in order: the shards of one manifest often warn alike.
    static func once(_ warnings: [JSON]) -> [JSON] {
        var seen = Set<String>()
        return warnings.filter { seen.insert($0.rendered).inserted }
    }

    /// `{"code": "shards_missing", "path": "", "message": ...}`, in the form of a run's warnings.
    static func missingShardsWarning(_ message: String) -> JSON {
        .object([("code", .string("shards_missing")), ("path", .string("")), ("message", .string(message))])
    }

    /// An item's place in the manifest: downloads first, then uploads, each by index; the objects
    /// listed from one `s3://` prefix share their entry's index and are told apart by destination.
    struct ItemKey: Comparable, CustomStringConvertible {
        var upload: Bool
        var index: Int64
        var to: String

        init(_ item: JSON) {
            upload = item["kind"]?.stringValue == "upload"
            index = item["index"]?.intValue ?? -1
            to = item["to"]?.stringValue ?? ""
        }

        static func < (a: ItemKey, b: ItemKey) -> Bool {
            let (x, y) = ((a.upload ? 1 : 0, a.index), (b.upload ? 1 : 0, b.index))
            return x != y ? x < y : a.to.utf8.lexicographicallyPrecedes(b.to.utf8)
        }
        var description: String { "\(upload ? "uploads" : "downloads")[\(index)] (\(to))" }
    }

    /// Every number summed key by key (whole numbers stay whole), in the first report's order.
    static func sum(_ totals: [JSON]) -> JSON {
        guard case .object(let first)? = totals.first else { return .object([]) }
        let pairs: [(String, JSON)] = first.map { key, _ in
            let values = totals.compactMap { $0[key] }
            if values.allSatisfy({ $0.intValue != nil }) {
                return (key, .int(values.reduce(0) { $0 + $1.intValue! }))
            }
            let doubles = values.map { v -> Double in
                switch v {
                case .int(let n): Double(n)
                case .double(let d): d
                default: 0
                }
            }
            return (key, .double(doubles.reduce(0, +)))
        }
        return .object(pairs)
    }
}

/// Merges `--junit` files: one `<testsuite>` per shard under one `<testsuites>` whose counts
/// are the sums. Reads only what syncr writes (its own attribute and property layout).
enum JUnitMerge {
    static func merge(_ texts: [(String, String)]) -> Result<MergedReport, MergeRefusal> {
        var origins: [ReportOriginOfFile] = []
        var suites: [String: String] = [:]
        var totals: [String: Double] = [:]
        for (file, text) in texts {
            guard let root = text.range(of: "<testsuites "), let rootEnd = text[root.upperBound...].firstIndex(of: ">"),
                  let start = text.range(of: "<testsuite "), let end = text.range(of: "</testsuite>", options: .backwards) else {
                return .failure(MergeRefusal(message: "\(file) is not a JUnit file written by syncr apply --junit"))
            }
            let rootTag = String(text[root.lowerBound...rootEnd])
            for name in ["tests", "failures", "errors", "time"] {
                totals[name, default: 0] += Double(attribute(name, in: rootTag) ?? "0") ?? 0
            }
            let block = String(text[start.lowerBound..<end.upperBound])
            suites[file] = block
            origins.append(ReportOriginOfFile(file: file, manifestSHA256: property("syncr.manifest_sha256", in: block),
                                              manifestPath: property("syncr.manifest", in: block),
                                              shard: property("syncr.shard", in: block).flatMap(Shard.init),
                                              method: property("syncr.shard_method", in: block)))
        }
        switch ReportOriginOfFile.check(origins) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let checked):
            let time = String(format3: totals["time"] ?? 0)
            // Missing shards are an error of the merged run, in a suite of their own: a CI
            // system shows the run as incomplete rather than green.
            let missing = checked.warning.map { warning in
                #"<testsuite name="syncr shards" tests="1" failures="0" errors="1" time="0.000"><testcase name="shards missing" classname="syncr"><error type="shards_missing" message=""#
                    + JUnitReport.escape(warning) + #"">"# + JUnitReport.escape(warning) + "</error></testcase></testsuite>"
            }
            let extra = missing == nil ? 0 : 1
            var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            out += "<testsuites name=\"syncr\" tests=\"\(Int(totals["tests"] ?? 0) + extra)\" failures=\"\(Int(totals["failures"] ?? 0))\" "
                + "errors=\"\(Int(totals["errors"] ?? 0) + extra)\" time=\"\(time)\">\n"
            for origin in checked.sorted { out += "  " + suites[origin.file]! + "\n" }
            if let missing { out += "  " + missing + "\n" }
            return .success(MergedReport(text: out + "</testsuites>\n", missingShards: checked.warning))
        }
    }

    /// `name="value"` inside one tag.
    static func attribute(_ name: String, in tag: String) -> String? {
        guard let r = tag.range(of: " \(name)=\"") else { return nil }
        return String(tag[r.upperBound...].prefix { $0 != "\"" })
    }

    /// `<property name="NAME" value="VALUE"/>` inside a suite.
    static func property(_ name: String, in block: String) -> String? {
        guard let r = block.range(of: "<property name=\"\(name)\" value=\"") else { return nil }
        return String(block[r.upperBound...].prefix { $0 != "\"" })
    }
}

private extension String {
    /// Three decimals, as JUnit times are written.
    init(format3 value: Double) {
        let ms = Int64((value * 1000).rounded())
        let frac = String(ms % 1000)
        self = "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }
}
