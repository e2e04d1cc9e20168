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
        let md = algorithm == .md5 ? EVP_md5() : EVP_sha256()
        EVP_DigestInit_ex(context, md, nil)
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
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return hexString(out.prefix(Int(length)))
    }

    /// The lowercase hex digest of a byte string.
    public static func hex<S: Sequence>(_ algorithm: Algorithm, of bytes: S) -> String where S.Element == UInt8 {
        let d = Digest(algorithm)
        d.update(bytes)
        return d.finalizeHex()
    }
}

/// Lowercase hex of bytes.
public func hexString<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var chars: [UInt8] = []
    chars.reserveCapacity(64)
    for b in bytes {
        chars.append(digits[Int(b >> 4)])
        chars.append(digits[Int(b & 0x0f)])
    }
    return String(decoding: chars, as: UTF8.self)
}

