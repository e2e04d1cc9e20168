import Testing
@testable import SyncrManifest

/// `max_unpacked_size:` on an `unzip: true` download.
@Suite(.timeLimit(.minutes(10))) struct MaxUnpackedSizeTests {
    @Test func sizeIsReadWithTheManifestsSizeSyntax() throws {
        let m = try parse("""
            version: 1
            downloads:
              - { url: https://example.com/a.zip, to: a, unzip: true, max_unpacked_size: 2GiB }
              - { url: https://example.com/b.zip, to: b, unzip: true }
            """)
        #expect(m.downloads[0].maxUnpackedSize == 2 << 30)
        #expect(m.downloads[1].maxUnpackedSize == nil)
    }

    @Test func withoutUnzipItIsAnError() {
        #expect(errors("""
            version: 1
            downloads:
              - url: https://example.com/a.bin
                to: a.bin
                max_unpacked_size: 1GiB
            """) == """
            syncr.yml:5:5: error: downloads[0].max_unpacked_size: max_unpacked_size applies only with unzip: true; remove it, or set unzip: true
                max_unpacked_size: 1GiB
                ^
            """)
    }

    @Test func notASizeIsAnError() {
        #expect(errors("""
            version: 1
            downloads:
              - { url: https://example.com/a.zip, to: a, unzip: true, max_unpacked_size: lots }
            """) == """
            syncr.yml:3:78: error: downloads[0].max_unpacked_size: expected a size like 512, 64KiB or 16MiB, found "lots"
              - { url: https://example.com/a.zip, to: a, unzip: true, max_unpacked_size: lots }
                                                                                         ^
            """)
    }
}
