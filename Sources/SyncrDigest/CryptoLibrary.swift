import CCrypto

/// The OpenSSL libcrypto this process runs with (libcurl's TLS uses the same one).
public enum CryptoLibrary {
    /// The loaded library's version: `3.0.17` from OpenSSL 3, the whole text
    /// (`OpenSSL 1.1.1w  11 Sep 2023`) from older ones, which have no bare number to ask for.
    public static var version: String {
        guard let text = syncr_openssl_version() else { return "unknown" }
        return String(cString: text)
    }

    /// Initialises libcrypto so that it is not torn down by `exit`: OpenSSL's exit-time cleanup
    /// frees the locks that threads still finishing TLS or digest work take, and such a thread
    /// then crashes the process after its work was done (seen as exit status 139 after a
    /// complete HTTPS run). Call before anything else uses OpenSSL (libcurl included): the
    /// first initialisation decides. The memory is the operating system's to take back.
    public static func keepUntilExit() {
        _ = syncr_crypto_init_without_atexit()
    }
}
