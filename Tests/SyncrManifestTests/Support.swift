@testable import SyncrManifest

/// The folder every test manifest pretends to live in.
let testDirectory = "/work/proj"

/// Parses `yaml` as `syncr.yml` in `testDirectory`.
func parse(_ yaml: String, environment: [String: String] = [:]) throws(ManifestError) -> Manifest {
    try ManifestLoader.parse(text: yaml, path: "syncr.yml", directory: testDirectory,
                             environment: environment)
}

/// The rendered errors for `yaml`, or "OK" when it parses.
func errors(_ yaml: String, environment: [String: String] = [:]) -> String {
    do {
        _ = try parse(yaml, environment: environment)
        return "OK"
    } catch {
        return error.description
    }
}

extension Settings {
    /// These settings as a manifest that wrote their `timeout:` decodes them.
    var timeoutWrittenInManifest: Settings {
        var settings = self
        settings.timeoutWritten = true
        return settings
    }
}
