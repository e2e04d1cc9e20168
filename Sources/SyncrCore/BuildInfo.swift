import CSystem
import SyncrArchive
import SyncrDigest
import SyncrHTTP
import SyncrManifest

/// What this binary is: syncr's version, the commit it was built from, and the versions of the C
/// libraries it runs with (as loaded now, which may differ from the ones it was built against).
public enum BuildInfo {
    /// syncr's version. Its one source is `SyncrHTTPInfo.version` (also sent as the `User-Agent`);
    /// `make dist` names the archives and the `.deb` after what the built binary reports.
    public static var version: String { SyncrHTTPInfo.version }

    /// The git commit (with `-dirty` when the tree had changes), or nil for a build that was not
    /// given one (a plain `swift build`; `make` passes it).
    public static var commit: String? {
        guard let text = syncr_build_commit() else { return nil }
        let commit = String(cString: text)
        return commit.isEmpty ? nil : commit
    }

    /// The C libraries syncr links, by their usual names, in a fixed order.
    public static var libraries: [(name: String, version: String)] {
        [("libcurl", CurlLibrary.version), ("libyaml", YAMLLibrary.version),
         ("zlib", ZlibLibrary.version), ("OpenSSL", CryptoLibrary.version)]
    }
}
