import SyncrCore

/// `--junit FILE`: the run as a JUnit XML report, one test case per entry and a failure for each
/// failed entry with its error, so that CI systems list failed fetches in their test view.
enum JUnitReport {
    /// - Parameters:
    ///   - properties: `<property>`s of the suite (the manifest's SHA-256 and the shard, which
    ///     `report merge` checks).
    ///   - shard: `I/N` of a sharded run, in the suite's name: the suites that `report merge`
    ///     puts side by side would otherwise have one name, and CI test views show (or fold)
    ///     them as one.
    ///   - warnings: those said at the start of apply (`Session.applyWarnings()`), in the
    ///     suite's `system-err` before the report's own.
    static func xml(_ report: ApplyReport, manifest: String, properties: [(String, String)] = [], shard: String? = nil,
                    warnings: [PlanWarning] = []) -> String {
        let failures = report.failed.count
        // An interrupted entry did not fail, but it did not finish either: an error, not a pass.
        let errors = report.interrupted.count
        let tests = report.results.count
        let time = seconds(report.seconds)
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += "<testsuites name=\"syncr\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(time)\">\n"
        let name = "syncr apply " + manifest + (shard.map { " (shard \($0))" } ?? "")
        out += "  <testsuite name=\"\(escape(name))\" tests=\"\(tests)\" failures=\"\(failures)\" "
            + "errors=\"\(errors)\" skipped=\"0\" time=\"\(time)\">\n"
        if !properties.isEmpty {
            out += "    <properties>\n"
            for (name, value) in properties {
                out += "      <property name=\"\(escape(name))\" value=\"\(escape(value))\"/>\n"
            }
            out += "    </properties>\n"
        }
        for r in report.results {
            out += "    <testcase classname=\"syncr.\(escape(r.item.kind.rawValue))\" name=\"\(escape(Rendering.name(r.item)))\" "
                + "time=\"\(seconds(r.seconds))\""
            var body = ""
            var out2: [String] = ["\(r.item.action.rawValue) \(r.item.url)"]
            // The element's type is the error's code (`http`, `checksum_mismatch`, ...), as a
            // test framework gives an exception's class.
            switch r.outcome {
            case .ok:
                out2.append("\(r.transferred) bytes in \(seconds(r.seconds)) s")
            case .skipped:
                out2.append("up to date: \(r.item.reason)")
            case .failed(let error):
                body += element("failure", error)
            case .interrupted(let interruption):
                body += element("error", .interrupted(interruption))
            }
            out2 += r.notes.map { "note: \($0)" }
            body += "      <system-out>" + escape(out2.joined(separator: "\n")) + "</system-out>\n"
            out += ">\n" + body + "    </testcase>\n"
        }
        let lines = warnings.map { "warning: \($0)" } + report.warnings.map { "warning: \($0)" }
        if !lines.isEmpty {
            out += "    <system-err>" + escape(lines.joined(separator: "\n")) + "</system-err>\n"
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// `<failure>` or `<error>` for `error`: its message as the attribute and the text, its
    /// code as the type.
    private static func element(_ name: String, _ error: SyncError) -> String {
        let message = escape(error.description)
        return "      <\(name) message=\"\(message)\" type=\"\(escape(error.code))\">\(message)</\(name)>\n"
    }

    private static func seconds(_ s: Double) -> String {
        let ms = Int64((s * 1000).rounded())
        let frac = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }

    /// Text for an attribute or element: markup escaped, and characters XML 1.0 cannot carry
    /// (most controls) replaced by U+FFFD.
    static func escape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t": out += "&#9;"
            case "\r": out += "&#13;"
            default:
                let v = scalar.value
                if v < 0x20 || (0xFFFE...0xFFFF).contains(v) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
