/// What tells two runs' reports apart by manifest: the SHA-256 of the manifest file's bytes,
/// the same on every machine that checked out the same commit, whatever the path.
public enum ManifestIdentity {
    /// The SHA-256 of the file at `path`, lowercase hex; nil when it cannot be read.
    public static func sha256(ofFile path: String) -> String? {
        (try? FS.digests(of: path, algorithms: ["sha256"]))?["sha256"]
    }
}
