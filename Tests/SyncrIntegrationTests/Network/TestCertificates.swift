import Foundation

/// A private CA and server certificates made with the `openssl` command for one test: nothing
/// here is trusted by the system, so a default run must refuse the server.
struct TestCertificates: Sendable {
    let directory: TemporaryDirectory
    /// The CA's certificate (PEM): what `ca_cert:` and `SSL_CERT_FILE` point at.
    let caCertificate: URL
    /// Signed by the CA for `IP:127.0.0.1` and `DNS:localhost`.
    let server: Nginx.TLSFiles
    /// Signed by the CA for `DNS:wrong.example` only: its name never matches 127.0.0.1.
    let wrongName: Nginx.TLSFiles

    enum Failure: Error, CustomStringConvertible {
        case openssl(arguments: [String], output: String)
        var description: String {
            switch self {
            case .openssl(let arguments, let output): return "openssl \(arguments.joined(separator: " ")) failed: \(output)"
            }
        }
    }

    static func make() async throws -> TestCertificates {
        let directory = try TemporaryDirectory(prefix: "certs")
        func path(_ name: String) -> String { directory.appending(name).path }
        func openssl(_ arguments: [String]) async throws {
            let result = try await runProcess(executable: "openssl", arguments: arguments, timeout: .seconds(60))
            guard result.exitCode == 0 else { throw Failure.openssl(arguments: arguments, output: result.stdout + result.stderr) }
        }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
                           "-subj", "/CN=syncr test CA",
                           "-addext", "basicConstraints=critical,CA:TRUE",
                           "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        func leaf(_ name: String, san: String) async throws -> Nginx.TLSFiles {
            try "subjectAltName=\(san)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                .write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try await openssl(["req"] + ec + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"),
                               "-subj", "/CN=syncr test server"])
            try await openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                               "-CAcreateserial", "-days", "2", "-out", path("\(name).pem"), "-extfile", path("\(name).ext")])
            return Nginx.TLSFiles(certificate: directory.appending("\(name).pem"), key: directory.appending("\(name).key"))
        }
        let server = try await leaf("server", san: "IP:127.0.0.1,DNS:localhost")
        let wrongName = try await leaf("wrong", san: "DNS:wrong.example")
        return TestCertificates(directory: directory, caCertificate: directory.appending("ca.pem"),
                                server: server, wrongName: wrongName)
    }
}
