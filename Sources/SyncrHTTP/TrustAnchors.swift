import CCurl
import Foundation
import SyncrLock

/// How a request checks the server's certificate.
public struct TLSOptions: Sendable, Equatable {
    /// Check the certificate chain and the host name (default). False is `insecure: true`.
    public var verify: Bool
    /// PEM files of CA certificates trusted in addition to the system's (`ca_cert:`,
    /// `SSL_CERT_FILE`).
    public var extraAnchors: [String]

    public init(verify: Bool = true, extraAnchors: [String] = []) {
        self.verify = verify
        self.extraAnchors = extraAnchors
    }
}

/// The CA bundle handed to curl when a request trusts more than the system's CAs.
///
/// `CURLOPT_CAINFO` replaces the system bundle rather than adding to it, and `CURLOPT_CAPATH`
/// needs a folder of hashed links that not every system has. So the bundle is built in memory:
/// the system bundle curl would use (`CURLINFO_CAINFO`) followed by the extra anchors, passed as
/// `CURLOPT_CAINFO_BLOB` (supported by the OpenSSL, GnuTLS, wolfSSL, mbedTLS and Schannel
/// backends). A system CA path (`CURLOPT_CAPATH`) stays in force as it was. No temporary file is
/// written, and each set of anchors is read once per run.
final class TrustBundle: Sendable {
    let pem: [UInt8]

    private init(pem: [UInt8]) { self.pem = pem }

    /// By the anchors as requests name them: every request asks, so the answer (nil too) is
    /// worked out once per run, not with two `stat`s per request.
    private static let cache = Locked<[[String]: TrustBundle?]>([:])

    /// The bundle for `anchors` (nil when there are none beyond the system's own), or why it
    /// cannot be built.
    static func bundle(for named: [String]) -> Result<TrustBundle?, TransferError> {
        guard !named.isEmpty else { return .success(nil) }
        if let cached = cache.withLock({ $0[named] }) { return .success(cached) }
        // CI images often point SSL_CERT_FILE at the system bundle itself: adding it to itself
        // would only hand curl a copy of what it already trusts, for every request.
        let anchors = named.filter { !isSystemBundle($0) }
        guard !anchors.isEmpty else {
            cache.withLock { $0[named] = .some(nil) }
            return .success(nil)
        }
        var pem: [UInt8] = []
        if let system = systemBundlePath, let bytes = FileManager.default.contents(atPath: system) {
            pem += Array(bytes)
            if pem.last != UInt8(ascii: "\n") { pem.append(UInt8(ascii: "\n")) }
        }
        for path in anchors {
            let data: [UInt8]
            switch readAnchor(path) {
            case .success(let bytes): data = bytes
            case .failure(let failure): return .failure(failure)
            }
            guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                return .failure(.local(path: path, errno: EINVAL,
                                       message: "holds no PEM certificate (-----BEGIN CERTIFICATE-----); convert a DER file with `openssl x509 -inform der -in FILE -out FILE.pem`"))
            }
            pem += data
            if pem.last != UInt8(ascii: "\n") { pem.append(UInt8(ascii: "\n")) }
        }
        let bundle = TrustBundle(pem: pem)
        cache.withLock { $0[named] = bundle }
        return .success(bundle)
    }

    /// The bytes of a CA file, or why not, from the call that failed: Foundation's reader
    /// answers nil for a device such as `/dev/null` and leaves `errno` as an earlier call set it.
    private static func readAnchor(_ path: String) -> Result<[UInt8], TransferError> {
        func failure(_ code: Int32, _ what: String) -> Result<[UInt8], TransferError> {
            .failure(.local(path: path, errno: code, message: "cannot read the CA certificate file: " + what))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { let code = errno; return failure(code, String(cString: strerror(code))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            return failure(EINVAL, "it is not a regular file; give the path of a PEM file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            if n == 0 { break }  // it shrank meanwhile: what is there is the file
            guard n > 0 else { let code = errno; return failure(code, String(cString: strerror(code))) }
            done += n
        }
        return .success(Array(bytes[..<done]))
    }

    /// Whether `path` is the system bundle file (the same file, by device and inode).
    static func isSystemBundle(_ path: String) -> Bool {
        guard let system = systemBundlePath else { return false }
        var a = stat(), b = stat()
        guard stat(path, &a) == 0, stat(system, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// The CA bundle file this libcurl uses by default (nil if it has none, e.g. CA path only).
    static let systemBundlePath: String? = {
        guard let easy = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(easy) }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        guard syncr_easy_getinfo_string(easy, CURLINFO_CAINFO, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
    }()
}
