import CYAML

/// The libyaml this process runs with.
public enum YAMLLibrary {
    /// The loaded library's version (e.g. `0.2.5`), as `yaml_get_version_string` reports it.
    public static var version: String {
        guard let text = yaml_get_version_string() else { return "unknown" }
        return String(cString: text)
    }
}
