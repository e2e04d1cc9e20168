import CCrypto

/// HMAC-SHA256 (RFC 2104) computed by libcrypto: the primitive of AWS Signature Version 4.
public enum HMAC {
    /// The 32-byte HMAC-SHA256 of `data` under `key`.
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = key.withUnsafeBytes { k in
            data.withUnsafeBufferPointer { d in
                out.withUnsafeMutableBufferPointer { o in
                    syncr_hmac_sha256(Digest.sha256, k.baseAddress, Int32(k.count), d.baseAddress, d.count, o.baseAddress)
                }
            }
        }
        // HMAC fails only when libcrypto cannot allocate its context: nothing sensible can continue.
        precondition(ok == 1, "HMAC-SHA256 failed in libcrypto: out of memory")
        return out
    }

    /// The HMAC-SHA256 of the UTF-8 bytes of `text` under `key`.
    public static func sha256(key: [UInt8], _ text: String) -> [UInt8] {
        sha256(key: key, data: Array(text.utf8))
    }
}

extension Digest {
    /// Finishes the digest and returns its bytes. The object must not be used afterwards.
    public func finalizeBytes() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Array(out.prefix(Int(length)))
    }

    /// The lowercase hex SHA-256 of the UTF-8 bytes of `text`.
    public static func sha256Hex(_ text: String) -> String {
        hex(.sha256, of: Array(text.utf8))
    }
}
