import CCurl

/// The libcurl this process runs with.
public enum CurlLibrary {
    /// The loaded library's version (e.g. `7.88.1`), which may be newer than the headers syncr was
    /// built against: `curl_version_info` reports the shared library, not the build.
    public static var version: String {
        guard let text = syncr_curl_version_number() else { return "unknown" }
        return String(cString: text)
    }
}
