import Testing
@testable import SyncrCore
import SyncrManifest
import SyncrHTTP

/// A library caller who prints what syncr gave it, with Swift's own means (`print`, `dump`,
/// `String(reflecting:)`), sees no secret: neither a `${VAR}` value nor a password or token
/// written out in the manifest (`Template.description` was its text as written, and `dump`
/// showed `expanded` and the redactor's list).
@Suite(.timeLimit(.minutes(5))) struct PrintedSecretsTests {
    private static let yaml = """
        version: 1
        downloads:
          - url: http://user:pa55wordXYZ99@127.0.0.1:1/a.bin?api_key=literalKEY12345&token=${QTOKEN}
            to: a.bin
            headers: { Authorization: "Bearer literalSECRET_abc123", X-Api-Key: "${HTOKEN}" }
        """
    private static let secrets = ["pa55wordXYZ99", "literalKEY12345", "literalSECRET_abc123", "qtokenValue77", "htokenValue88"]

    private static func everyPrint(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped]
    }

    @Test func printingTheManifestAndTheSessionShowsNoSecret() throws {
        let manifest = try ManifestLoader.parse(text: Self.yaml, path: "/p/syncr.yml", directory: "/p",
                                                environment: ["QTOKEN": "qtokenValue77", "HTOKEN": "htokenValue88"])
        let download = try #require(manifest.downloads.first)
        let session = Session(manifest: manifest)
        defer { session.close() }
        let printed = [manifest, download, download.url, download.settings.headers, session, session.redactor]
            .flatMap(Self.everyPrint)
        for text in printed {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
        #expect(download.url.description == "http://user:***@127.0.0.1:1/a.bin?api_key=***&token=${QTOKEN}")
        #expect(download.settings.headers.map(\.description) == ["Authorization: Bearer ***", "X-Api-Key: ${HTOKEN}"])
        #expect(session.redactor.description.hasPrefix("Redactor("))
        // What is sent is not masked.
        #expect(download.url.expanded.contains("qtokenValue77"))
    }

    /// An engine keeps the proxy variables it read (`Configuration.proxies`), and an
    /// `http_proxy` may carry a password: the engine, its configuration and a session on it
    /// print the variables' names and the proxies' addresses, never their URLs.
    @Test func printingAnEngineShowsNoProxyPassword() throws {
        let proxies = ProxyEnvironment { name in
            ["http_proxy": "http://user:proxyPass9911@127.0.0.1:3128", "all_proxy": "socks5://u:socksPass8822@127.0.0.1:1080",
             "no_proxy": "localhost"][name]
        }
        let engine = TransferEngine(configuration: .init(proxies: proxies))
        defer { engine.shutdown() }
        let manifest = try ManifestLoader.parse(text: "version: 1\ndownloads: []\n", path: "/p/syncr.yml", directory: "/p",
                                                environment: [:])
        let session = Session(manifest: manifest, transport: engine)
        defer { session.close() }
        for text in [proxies, engine.configuration, engine, session].flatMap(Self.everyPrint) {
            #expect(!text.contains("proxyPass9911") && !text.contains("socksPass8822"), "\(text)")
        }
        #expect(proxies.description == "ProxyEnvironment(http_proxy, all_proxy, no_proxy)")
    }
}
