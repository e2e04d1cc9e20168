import Foundation
import Testing
@testable import SyncrHTTP

/// The in-memory CA bundle: built only when a request trusts more than the system's CAs.
@Suite(.timeLimit(.minutes(10)))
struct TrustBundleTests {
    /// `SSL_CERT_FILE` pointing at the system bundle itself (as on many CI images) adds nothing,
    /// so no bundle is built and curl keeps its own: before, every request copied the system
    /// bundle twice into its handle.
    @Test func theSystemBundleAsAnAnchorBuildsNoBundle() throws {
        let system = try #require(TrustBundle.systemBundlePath, "this libcurl names a CA bundle file")
        try #require(FileManager.default.fileExists(atPath: system))
        #expect(TrustBundle.isSystemBundle(system))
        guard case .success(let bundle) = TrustBundle.bundle(for: [system]) else {
            Issue.record("the system bundle could not be read")
            return
        }
        #expect(bundle == nil)
    }

    /// Another anchor is added after the system's CAs, and the system bundle is not repeated.
    @Test func anExtraAnchorFollowsTheSystemBundleOnce() throws {
        let system = try #require(TrustBundle.systemBundlePath)
        let systemBytes = try Data(contentsOf: URL(fileURLWithPath: system))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let extra = folder.appendingPathComponent("extra.pem")
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        try pem.write(to: extra, atomically: true, encoding: .utf8)
        guard case .success(let bundle?) = TrustBundle.bundle(for: [system, extra.path]) else {
            Issue.record("no bundle was built for an extra anchor")
            return
        }
        let text = String(decoding: bundle.pem, as: UTF8.self)
        #expect(text.hasSuffix(pem))
        #expect(bundle.pem.count <= systemBytes.count + 1 + pem.utf8.count, "the system bundle appears once")
    }

    /// A CA file that cannot be read is named with the reason of the call that failed: a
    /// device (`ca_cert: /dev/null`) was told "No such file or directory", an earlier call's.
    @Test(arguments: [("/dev/null", "it is not a regular file"),
                      ("/no/such/ca.pem", "No such file or directory"),
                      ("/", "it is not a regular file")])
    func anUnreadableAnchorSaysWhy(path: String, reason: String) {
        guard case .failure(.local(let named, _, let message)) = TrustBundle.bundle(for: [path]) else {
            Issue.record("\(path) was taken as a CA file")
            return
        }
        #expect(named == path)
        #expect(message == "cannot read the CA certificate file: " + reason
                || message.hasPrefix("cannot read the CA certificate file: " + reason + ";"), "\(message)")
    }
}
