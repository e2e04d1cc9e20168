import SyncrDigest

/// What a program using SyncrCore does first.
public enum ProcessSetup {
    /// Prepares the C libraries for a multithreaded process that may exit while worker threads
    /// still run: libcrypto (under libcurl's TLS too) keeps its state until the process ends.
    /// Call once, before any request or digest.
    public static func prepare() {
        CryptoLibrary.keepUntilExit()
    }
}
