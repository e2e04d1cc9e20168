import SyncrCore

/// `syncr version [--json]`: the version, the commit it was built from, and the C libraries it
/// runs with, so a bug report or a CI log says exactly what ran.
enum VersionCommand {
    static func run(_ options: VersionOptions) -> Int32 {
        Output.out(options.json ? json().rendered : text())
        return ExitCode.success
    }

    /// `syncr 0.1.0`, then one aligned line each for the commit and every library.
    static func text() -> String {
        let rows = [("commit", BuildInfo.commit ?? "unknown")] + BuildInfo.libraries.map { ($0.name, $0.version) }
        let width = rows.map(\.0.count).max() ?? 0
        let lines = rows.map { name, value in name + String(repeating: " ", count: width - name.count + 2) + value }
        return (["syncr \(BuildInfo.version)"] + lines).joined(separator: "\n")
    }

    /// `{"version": "0.1.0", "commit": "..." or null, "libraries": {"libcurl": "7.88.1", ...}}`,
    /// library names in lower case.
    static func json() -> JSON {
        .object([
            ("version", .string(BuildInfo.version)),
            ("commit", .optional(BuildInfo.commit)),
            ("libraries", .object(BuildInfo.libraries.map { ($0.name.lowercased(), .string($0.version)) })),
        ])
    }
}
