import CCrypto

/// A streaming message digest (MD5 or SHA-256) computed by OpenSSL's libcrypto.
///
/// Owns one `EVP_MD_CTX`; not thread-safe, use from one task at a time.
public final class Digest {
    /// The algorithms syncr verifies downloads with.
    public enum Algorithm: String, Sendable {
        case md5, sha256
    }

    public let algorithm: Algorithm
    let context: OpaquePointer

    public init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        guard let ctx = EVP_MD_CTX_new() else {
            // Allocation of a few hundred bytes failed: nothing sensible can continue.
            fatalError("EVP_MD_CTX_new failed: out of memory")
        }
        context = ctx
        EVP_DigestInit_ex(context, algorithm == .md5 ? Self.md5 : Self.sha256, nil)
    }

    // libcrypto's algorithms, fetched once (`syncr_fetch_md`): every cache key is an MD5, and
    // every signed request takes five HMACs and a SHA-256, each an initialisation that would
    // otherwise look its algorithm up again. nonisolated(unsafe): set once, then only read; a
    // fetched EVP_MD is immutable and shared by threads (OpenSSL's EVP_MD_fetch manual).
    nonisolated(unsafe) static let md5 = syncr_fetch_md(0)
    nonisolated(unsafe) static let sha256 = syncr_fetch_md(1)

    /// Fetches both algorithms from libcrypto's providers now (its configuration is read on the
    /// first, about half a millisecond), which the first digest would otherwise do: a caller may
    /// do it on another thread beforehand. Idempotent and thread-safe.
    public static func prepare() {
        _ = md5
        _ = sha256
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Adds bytes to the digest.
    public func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// Finishes the digest and returns it as lowercase hex. The object must not be used afterwards.
    public func finalizeHex() -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { out in
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, out.baseAddress, &length)
            return hexString(UnsafeBufferPointer(rebasing: out[..<Int(length)]))
        }
    }

    /// The lowercase hex digest of a byte string, in one call to libcrypto (no context of
    /// syncr's own: every entry's cache key is one, about 6,000 instructions each with one).
    public static func hex<S: Sequence>(_ algorithm: Algorithm, of bytes: S) -> String where S.Element == UInt8 {
        let input = Array(bytes)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { out in
            var length: UInt32 = 0
            let ok = input.withUnsafeBytes { data in
                EVP_Digest(data.baseAddress, data.count, out.baseAddress, &length,
                           algorithm == .md5 ? Self.md5 : Self.sha256, nil)
            }
            // Fails only when libcrypto cannot allocate its context: nothing sensible can continue.
            precondition(ok == 1, "\(algorithm.rawValue) failed in libcrypto: out of memory")
            return hexString(UnsafeBufferPointer(rebasing: out[..<Int(length)]))
        }
    }
}

/// Lowercase hex of bytes.
public func hexString<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    if let text = bytes.withContiguousStorageIfAvailable(hexString) { return text }
    return Array(bytes).withUnsafeBufferPointer(hexString)
}

/// Lowercase hex of bytes, written straight into the string's storage.
private func hexString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    let digits: StaticString = "0123456789abcdef"
    return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
        for (i, byte) in bytes.enumerated() {
            out[2 * i] = digits.utf8Start[Int(byte >> 4)]
            out[2 * i + 1] = digits.utf8Start[Int(byte & 0x0F)]
        }
        return bytes.count * 2
    }
}
