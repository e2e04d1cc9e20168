import CZlib

/// The zlib this process runs with.
public enum ZlibLibrary {
    /// The loaded library's version (e.g. `1.2.13`): `zlibVersion()`, not the header's `ZLIB_VERSION`.
    public static var version: String {
        guard let text = zlibVersion() else { return "unknown" }
        return String(cString: text)
    }
}
