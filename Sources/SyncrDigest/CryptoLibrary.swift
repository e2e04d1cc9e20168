import CCrypto

/// The OpenSSL libcrypto this process runs with (libcurl's TLS uses the same one).
public enum CryptoLibrary {
    /// The loaded library's version: `3.0.17` from OpenSSL 3, the whole text
    /// (`OpenSSL 1.1.1w  11 Sep 2023`) from older ones, which have no bare number to ask for.
    public static var version: String {
        guard let text = syncr_openssl_version() else { return "unknown" }
        return String(cString: text)
    }
}
