import Foundation
import Testing
@testable import SyncrManifest

/// `ca_cert`, `insecure`, `trusted_redirects`, `max_redirects`, `allow_insecure_redirects`,
/// `netrc`, and URL credentials as secrets.
@Suite(.timeLimit(.minutes(10))) struct NetworkSettingsTests {
    /// A real folder with a `ca.pem`, since `ca_cert` must exist when the manifest is read.
    static func withFolder<T>(_ body: (String) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncr-net-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/certs", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder + "/certs/ca.pem", contents: Data("-----BEGIN CERTIFICATE-----\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try body(folder)
    }

    static func parseIn(_ yaml: String, in folder: String) throws(ManifestError) -> Manifest {
        try ManifestLoader.parse(text: yaml, path: "syncr.yml", directory: folder, environment: [:])
    }

    static func errorsIn(_ yaml: String, in folder: String) -> String {
        do {
            _ = try parseIn(yaml, in: folder)
            return "OK"
        } catch {
            return error.description
        }
    }

    @Test func builtInDefaults() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: https://example.com/a, to: a }
            """)
        #expect(manifest.downloads[0].settings.network == NetworkSettings())
        #expect(NetworkSettings().maxRedirects == 10)
        #expect(!NetworkSettings().insecure && !NetworkSettings().netrc && !NetworkSettings().trustedRedirects)
    }

    @Test func defaultsAndEntryOverrides() throws {
        try Self.withFolder { folder in
            let manifest = try Self.parseIn("""
                version: 1
                defaults:
                  ca_cert: certs/ca.pem
                  max_redirects: 3
                  netrc: true
                downloads:
                  - { url: https://example.com/a, to: a }
                  - url: https://example.com/b
                    to: b
                    insecure: true
                    trusted_redirects: true
                    allow_insecure_redirects: true
                    max_redirects: 0
                    netrc: false
                uploads:
                  - { from: a, to: https://example.com/u, insecure: true, max_redirects: 2 }
                """, in: folder)
            let a = manifest.downloads[0].settings.network, b = manifest.downloads[1].settings.network
            #expect(a.caCertificate == folder + "/certs/ca.pem")
            #expect(a.caCertificateWritten == "certs/ca.pem")
            #expect(a.maxRedirects == 3 && a.netrc && !a.insecure && !a.trustedRedirects)
            #expect(b.caCertificate == folder + "/certs/ca.pem")
            #expect(b.insecure && b.trustedRedirects && b.allowInsecureRedirects && b.maxRedirects == 0 && !b.netrc)
            let u = manifest.uploads[0].settings.network
            #expect(u.insecure && u.maxRedirects == 2 && u.netrc)
        }
    }

    @Test func insecureUnderDefaultsIsRefused() {
        #expect(errors("""
            version: 1
            defaults:
              insecure: true
            """) == """
            syncr.yml:3:3: error: defaults.insecure: insecure turns certificate checks off for one entry only; set it on each entry that needs it, not under defaults:
              insecure: true
              ^
            hint: to trust a private certificate authority for every entry, set ca_cert: under defaults: instead
            """)
    }

    @Test func missingCACertificate() throws {
        try Self.withFolder { folder in
            #expect(Self.errorsIn("""
                version: 1
                downloads:
                  - url: https://example.com/a
                    to: a
                    ca_cert: certs/missing.pem
                """, in: folder) == """
                syncr.yml:5:14: error: downloads[0].ca_cert: "certs/missing.pem" does not exist (looked for \(folder)/certs/missing.pem); give the path of a PEM file of CA certificates, relative to the manifest's folder
                    ca_cert: certs/missing.pem
                             ^
                """)
        }
    }

    @Test func caCertificateThatIsAFolder() throws {
        try Self.withFolder { folder in
            #expect(Self.errorsIn("""
                version: 1
                defaults: { ca_cert: certs }
                """, in: folder) == """
                syncr.yml:2:22: error: defaults.ca_cert: "certs" is a folder; give the path of a PEM file of CA certificates
                defaults: { ca_cert: certs }
                                     ^
                """)
        }
    }

    @Test func badValues() {
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                max_redirects: 101
                insecure: yes
                netrc: "true"
                trusted_redirects: 1
                ca_cert: ""
            """) == """
            syncr.yml:5:20: error: downloads[0].max_redirects: expected an integer from 0 to 100, found 101
                max_redirects: 101
                               ^
            syncr.yml:6:15: error: downloads[0].insecure: expected true or false, found "yes"
                insecure: yes
                          ^
            syncr.yml:7:12: error: downloads[0].netrc: expected true or false, found the string "true" (remove the quotes)
                netrc: "true"
                       ^
            syncr.yml:8:24: error: downloads[0].trusted_redirects: expected true or false, found 1
                trusted_redirects: 1
                                   ^
            syncr.yml:9:14: error: downloads[0].ca_cert: expected a file path, found an empty string
                ca_cert: ""
                         ^
            """)
    }

    @Test func misspeltKeyIsSuggested() {
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a
                to: a
                max_redirect: 3
            """) == """
            syncr.yml:5:5: error: downloads[0].max_redirect: unknown key 'max_redirect'; did you mean 'max_redirects'?
                max_redirect: 3
                ^
            """)
    }

    @Test func urlPasswordIsASecret() throws {
        let manifest = try parse("""
            version: 1
            downloads:
              - { url: "https://bob:s3cr%40t@example.com/a", to: a }
            uploads:
              - { from: a, to: "https://token123@example.com/u" }
            """)
        // With what an HTTP client makes of them: `Authorization: Basic base64(user:password)`.
        #expect(Set(manifest.secrets) == ["s3cr%40t", "s3cr@t", "token123", "Ym9iOnMzY3JAdA==", "dG9rZW4xMjM="])
    }

    @Test(arguments: [("", ""), ("a", "YQ=="), ("ab", "YWI="), ("abc", "YWJj"), ("bob:s3cr@t", "Ym9iOnMzY3JAdA==")])
    func basicAuthenticationBase64(text: String, encoded: String) {
        #expect(URLCredentials.base64(Array(text.utf8)) == encoded)
    }

    /// The source line quoted under an error masks a password written in a URL.
    @Test func diagnosticMasksURLPassword() {
        let text = errors("""
            version: 1
            downloads:
              - { url: "https://bob:hunter22@example.com/a", to: a, sha256: x }
            """)
        #expect(text.contains("https://bob:***@example.com/a"))
        #expect(!text.contains("hunter22"))
    }
}
