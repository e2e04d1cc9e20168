import SyncrCore
import SyncrManifest

/// Turns plans and reports into text and JSON. Only prints what the library already masked.
enum Rendering {
    // MARK: JSON

    static func json(_ item: PlanItem) -> [(String, JSON)] {
        // The index in downloads: or uploads: puts merged shard reports back in manifest order.
        var pairs = [("index", JSON.int(Int64(item.index)))] + fields(item)
        if item.insecure { pairs.append(("insecure", .bool(true))) }
        if let error = item.error { pairs += errorFields(error) }
        return pairs
    }

    /// What kind of error it was, for scripts: `error_code` (`SyncError.code`), and
    /// `http_status` for an HTTP error.
    static func errorFields(_ error: SyncError) -> [(String, JSON)] {
        var pairs: [(String, JSON)] = [("error_code", .string(error.code))]
        if let status = error.httpStatus { pairs.append(("http_status", .int(Int64(status)))) }
        return pairs
    }

    private static func fields(_ item: PlanItem) -> [(String, JSON)] {
        if item.kind == .upload {
            return [
                ("kind", .string(item.kind.rawValue)),
                ("from", .optional(item.from)),
                ("url", .string(item.url)),
                ("action", .string(item.action.rawValue)),
                ("size", .optional(item.size)),
                ("bytes", .optional(item.bytes)),
                ("reason", .string(item.reason)),
            ]
        }
        return [
            ("kind", .string(item.kind.rawValue)),
            ("url", .string(item.url)),
            ("to", .string(item.to)),
            ("action", .string(item.action.rawValue)),
            ("size", .optional(item.size)),
            ("offset", .int(item.offset)),
            ("bytes", .optional(item.bytes)),
            ("reason", .string(item.reason)),
        ]
    }

    static func totals(_ plan: Plan) -> [(String, JSON)] {
        var pairs: [(String, JSON)] = [("download_bytes", .int(plan.downloadBytes)),
                                       ("upload_bytes", .int(plan.uploadBytes))]
        for action in Action.allCases { pairs.append((action.rawValue, .int(Int64(plan.count(action))))) }
        pairs.append(("unknown_sizes", .int(Int64(plan.unknownSizes))))
        return pairs
    }

    static func planJSON(_ plan: Plan) -> String {
        JSON.object([
            ("version", .int(1)),
            ("items", .array(plan.items.map { .object(json($0)) })),
            ("totals", .object(totals(plan))),
            // Strings since version 1, and scripts read them so: the codes and paths come in
            // `warning_details`, in the form of `apply --json`'s `warnings`.
            ("warnings", .array(plan.warnings.map { .string($0.description) })),
            ("warning_details", .array(plan.warnings.map(warningJSON))),
            ("fsync", .bool(plan.fsync)),
        ] + (plan.sharding.map { [("shard", shardJSON($0, items: plan.items))] } ?? [])).rendered
    }

    /// - Parameters:
    ///   - plan: the plan the report carried out; its `warnings` are those said at the start of
    ///     apply (`Session.applyWarnings()`), listed before the report's own.
    ///   - header: pairs after `version` (the manifest and the shard, for `report merge`).
    static func applyJSON(_ report: ApplyReport, plan: Plan, header: [(String, JSON)] = []) -> String {
        let items: [JSON] = report.results.map { r in
            var item = r.item
            // The plan's error, if any, is the result's: its fields come once, after `error`.
            item.error = nil
            var pairs = json(item)
            pairs.append(("status", .string(r.status.rawValue)))
            pairs.append(("transferred", .int(r.transferred)))
            pairs.append(("seconds", .double(r.seconds)))
            pairs.append(("error", .optional(r.error?.description)))
            pairs += r.error.map(errorFields) ?? [("error_code", .null)]
            if !r.notes.isEmpty { pairs.append(("notes", .array(r.notes.map { .string($0.description) }))) }
            return .object(pairs)
        }
        var totals = totals(plan)
        totals.append(("transferred_bytes", .int(report.transferred)))
        for status in [ItemResult.Status.ok, .skipped, .failed, .interrupted] {
            totals.append((status.rawValue, .int(Int64(report.results.filter { $0.status == status }.count))))
        }
        totals.append(("seconds", .double(report.seconds)))
        return JSON.object([("version", .int(1))] + header + [
            ("items", .array(items)),
            ("totals", .object(totals)),
            ("warnings", .array(plan.warnings.map(warningJSON) + report.warnings.map(warningJSON))),
        ]).rendered
    }

    /// `{"code": ..., "path": ..., "message": ...}` for a run-level warning.
    static func warningJSON(_ warning: RunWarning) -> JSON {
        .object([("code", .string(warning.code)), ("path", .string(warning.error.path)),
                 ("message", .string(warning.description))])
    }

    /// `{"code": ..., "path": ..., "message": ...}` for a warning said before the run: in
    /// `plan --json`'s `warning_details`, and first in `apply --json`'s `warnings`.
    static func warningJSON(_ warning: PlanWarning) -> JSON {
        .object([("code", .string(warning.code)), ("path", .string(warning.path)),
                 ("message", .string(warning.description))])
    }

    // MARK: text

    static func planText(_ plan: Plan, manifest: String, quiet: Bool) -> String {
        var lines: [String] = []
        if !quiet {
            // At least the heading's width: shorter names put the columns under the wrong heads.
            let toWidth = max("ENTRY".count, min(48, plan.items.map { name($0).count }.max() ?? 2))
            lines.append(pad("ACTION", 9) + pad("ENTRY", toWidth + 2) + pad("SIZE", 11) + pad("MOVE", 11) + "REASON")
            for item in plan.items {
                let size = item.size.map(ByteSize.format) ?? "?"
                let fetch: String
                switch item.action {
                case .skip: fetch = "-"
                case .error: fetch = "-"
                default: fetch = item.bytes.map(ByteSize.format) ?? "?"
                }
                var reason = item.reason
                // Where the fetch goes on; with nothing left to fetch (an archive unpacked again
                // from the cache) there is no such place.
                if item.action == .resume, item.bytes != 0 {
                    reason = "from byte \(item.offset): " + reason
                }
                if item.action == .error {
                    reason = "cannot plan: " + reason
                }
                lines.append(pad(item.action.rawValue, 9) + pad(name(item), toWidth + 2) + pad(size, 11) + pad(fetch, 11)
                    + printable(reason))
            }
        }
        if let sharding = plan.sharding { lines.append(shardLine(sharding, items: plan.items)) }
        lines.append(planSummary(plan, manifest: manifest))
        if !plan.fsync { lines.append(noFsyncNote) }
        lines += plan.warnings.map { "warning: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// Said wherever a plan is shown with flushing off.
    static let noFsyncNote = "note: fsync is off (fsync: false or --no-fsync): files are safe if syncr is killed, "
        + "but a power loss may lose or tear what this run wrote"

    /// What a plan line names: a download's destination, an upload's source and target.
    static func name(_ item: PlanItem) -> String {
        printable(item.kind == .upload ? "\(item.from ?? "?") -> \(item.url)" : item.to)
    }

    /// A name as the terminal should see it: control characters written as `\u{1B}`. A name
    /// comes from a manifest or an object store's listing as it is, and an escape sequence in it
    /// would drive the terminal, a newline split a CI log's line.
    static func printable(_ name: String) -> String {
        func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F...0x9F).contains(s.value) }
        guard name.unicodeScalars.contains(where: isControl) else { return name }
        var out = ""
        for s in name.unicodeScalars {
            if isControl(s) { out += "\\u{" + String(s.value, radix: 16, uppercase: true) + "}" } else { out.unicodeScalars.append(s) }
        }
        return out
    }

    static func planSummary(_ plan: Plan, manifest: String) -> String {
        var text = "Plan for \(manifest): \(plan.count(.download)) to download, \(plan.count(.resume)) to resume, "
            + "\(plan.count(.restart)) to restart"
        if plan.items.contains(where: { $0.kind == .upload }) { text += ", \(plan.count(.upload)) to upload" }
        text += ", \(plan.count(.skip)) up to date"
        if plan.count(.error) > 0 { text += ", \(plan.count(.error)) failed to plan" }
        // Each side counts its own unknown sizes (a zipped folder's size is known once zipped).
        let unknownDownloads = plan.unknownSizes(of: .download), unknownUploads = plan.unknownSizes(of: .upload)
        text += "; \(ByteSize.format(plan.downloadBytes)) (\(plan.downloadBytes) bytes) to fetch"
        if unknownDownloads > 0 { text += " plus \(unknownDownloads) of unknown size" }
        if plan.uploadBytes > 0 || unknownUploads > 0 {
            text += ", \(ByteSize.format(plan.uploadBytes)) (\(plan.uploadBytes) bytes) to send"
            if unknownUploads > 0 { text += " plus \(unknownUploads) of unknown size" }
        }
        text += plan.hasWork ? "." : ". Nothing to do."
        return text
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }

    static func seconds(_ s: Double) -> String {
        if s < 10 { return String(Double(Int(s * 100)) / 100) + " s" }
        return String(Int(s.rounded())) + " s"
    }

    static func speed(bytes: Int64, seconds: Double) -> String {
        guard seconds > 0.001 else { return "-" }
        return ByteSize.format(Int64(Double(bytes) / seconds)) + "/s"
    }
}
