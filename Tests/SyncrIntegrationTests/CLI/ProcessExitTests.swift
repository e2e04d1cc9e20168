#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// How syncr ends. It calls `exit` from a Swift concurrency thread while other threads (the
/// flush pool, Dispatch's workers) may still be finishing: no library may tear down state they
/// use. OpenSSL's exit-time cleanup did (a complete HTTPS run then exited 139, crashed in
/// `pthread_rwlock_rdlock`), so libcrypto is initialised without it.
@Suite("process exit", .timeLimit(.minutes(5)))
struct ProcessExitTests {
    /// Under gdb, with a breakpoint on `OPENSSL_cleanup`: a real HTTPS download must end
    /// without reaching it.
    @Test func openSSLIsNotTornDownAtExit() async throws {
        let www = try TemporaryDirectory(prefix: "www")
        try makeFile(path: www.appending("a.bin"), size: 100_000, seed: 9)
        let certificates = try await TestCertificates.make()
        let nginx = try await Nginx.start(root: www.url, options: .init(tls: certificates.server, http2: true))
        defer { nginx.stop() }
        let project = try Project()
        try project.writeManifest(defaults: "{ retries: 1, timeout: 5s, ca_cert: \(certificates.caCertificate.path) }",
                                  downloads: ["{ url: \(nginx.url("/a.bin")), to: out/a.bin }"])
        let gdb = try await runProcess(
            executable: "/usr/bin/gdb",
            arguments: ["-batch", "-nx", "-ex", "set breakpoint pending on", "-ex", "break OPENSSL_cleanup",
                        "-ex", "run", "-ex", "bt 3", "--args", project.binary.path, "apply", "--quiet"],
            environment: tracedEnvironment(), cwd: project.folder.url, timeout: .seconds(120))
        #expect(gdb.stdout.contains("exited normally"), "\(gdb.stdout)\n\(gdb.stderr)")
        #expect(!gdb.stdout.contains("hit Breakpoint"), "\(gdb.stdout)")
        #expect(try await sha256(file: project.file("out/a.bin")) == (try await sha256(file: www.appending("a.bin"))))
    }
}
