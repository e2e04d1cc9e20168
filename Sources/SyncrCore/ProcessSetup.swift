import SyncrDigest
import SyncrHTTP

/// What a program using SyncrCore does first.
public enum ProcessSetup {
    /// Prepares the C libraries for a multithreaded process that may exit while worker threads
    /// still run: libcrypto (under libcurl's TLS too) keeps its state until the process ends.
    /// Call once, before any request or digest.
    public static func prepare() {
        CryptoLibrary.keepUntilExit()
    }

    /// Does now the one-time setup that the first session and its first entry would otherwise
    /// wait for (about 2 ms): libcurl's global initialisation with its TLS library, libcrypto's
    /// digests, the environment's certificate and netrc files. The CLI runs it on another
    /// thread while it parses the manifest. Calls `prepare()` first, so that OpenSSL is never
    /// initialised with its exit-time cleanup. Idempotent; safe beside syncr's own work on
    /// other threads, but not while other code in the process uses libcurl (libcurl's global
    /// initialisation is not thread-safe against it). Never required.
    public static func warmUp() {
        prepare()
        TransferEngine.prepareLibrary()
        Digest.prepare()
        _ = NetworkEnvironment.certificateFile
        _ = NetworkEnvironment.netrcFile
    }
}
