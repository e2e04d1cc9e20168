import Foundation

/// What to do about a certificate that could not be verified, by what OpenSSL (through curl)
/// said was wrong with it: one piece of advice for every failure sent users of an expired
/// certificate, or of a URL naming a host the certificate does not cover, after a private CA.
enum CertificateAdvice {
    /// Where `SSL_CERT_FILE` names a file that cannot be read, which syncr ignores as OpenSSL
    /// does: a user who set it for this CA must hear that it was not used, not be told to set it.
    static let unreadableCertificateFile: String? = {
        guard let path = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !path.isEmpty,
              access(path, R_OK) != 0 else { return nil }
        return "SSL_CERT_FILE names \(path), which cannot be read (\(String(cString: strerror(errno)))), so it was ignored; "
    }()

    static func advice(for detail: String) -> String {
        let said = detail.lowercased()
        if said.contains("expired") {
            return "the certificate has expired: its server must be given a new one (trusting another CA does not help)"
        }
        if said.contains("not yet valid") {
            return "the certificate is not valid yet: check this machine's clock, or the server's certificate dates"
        }
        if said.contains("subject name") || said.contains("does not match target host") || said.contains("host name")
            || said.contains("hostname mismatch") {
            return "the certificate is for another name than the URL's host: use a name it covers in the URL"
        }
        if let unreadable = unreadableCertificateFile {
            return unreadable + "point it at the CA's PEM file, or trust the CA with ca_cert: FILE on the entry"
        }
        return "if the server uses a private CA, trust it with ca_cert: FILE (or SSL_CERT_FILE), "
            + "or set insecure: true on the entry to skip the check (for the entry's own server only: "
            + "a server a redirect leads to is always checked)"
    }
}
