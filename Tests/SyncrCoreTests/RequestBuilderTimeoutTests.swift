import SyncrHTTP
import SyncrManifest
import Testing
@testable import SyncrCore

/// The time limits every request of an entry carries, and who set them.
@Suite(.timeLimit(.minutes(5))) struct RequestBuilderTimeoutTests {
    func manifest(_ yaml: String) throws -> Manifest {
        try ManifestLoader.parse(text: yaml, path: "syncr.yml", directory: "/work/proj", environment: [:])
    }

    /// A PUT or POST is checked for stalls like a GET: it had none, and a server that stopped
    /// taking its body failed it through curl's low-speed limit, in curl's words.
    @Test func anUploadCarriesTheEntrysStallLimit() throws {
        let m = try manifest("""
            version: 1
            uploads:
              - { from: a.bin, to: "http://h/up/a.bin", method: put, timeout: 7s }
            """)
        let request = RequestBuilder(upload: m.uploads[0]).upload(.file(path: "/work/proj/a.bin"), url: "http://h/up/a.bin",
                                                                  displayURL: "http://h/up/a.bin")
        #expect(request.stallMilliseconds == 7_000)
        #expect(request.timeoutOrigin == .configured)
    }

    /// Only a manifest that wrote `timeout:` (30 s included) is named as its origin; a value
    /// a program set in the settings itself is neither the manifest's nor the default.
    @Test func theTimeoutsOriginIsWhereItWasSet() throws {
        let m = try manifest("""
            version: 1
            downloads:
              - { url: "http://h/a", to: a }
              - { url: "http://h/b", to: b, timeout: 30s }
            """)
        #expect(RequestBuilder(download: m.downloads[0]).get().timeoutOrigin == .builtIn)
        #expect(RequestBuilder(download: m.downloads[1]).get().timeoutOrigin == .configured)
        var programmed = m.downloads[0]
        programmed.settings.timeoutMilliseconds = 10_000
        #expect(RequestBuilder(download: programmed).get().timeoutOrigin == .unstated)
    }
}
