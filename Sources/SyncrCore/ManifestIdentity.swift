import SyncrDigest
/// What tells two runs' reports apart by manifest: the SHA-256 of the manifest file's bytes,
/// the same on every machine that checked out the same commit, whatever the path.
public enum ManifestIdentity {
    /// The SHA-256 of a manifest's bytes as they were read, lowercase hex.
    public static func sha256(of bytes: [UInt8]) -> String {
        Digest.hex(.sha256, of: bytes)
    }
}
