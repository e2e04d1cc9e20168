import Foundation
import Testing
@testable import SyncrManifest

/// A cache that is the manifest's own folder, or a folder above it (`cache: .`), is refused as
/// the manifest is read: it passed validate, plan and apply, then `syncr lock` failed ("would
/// replace the lock file of the cache") and `plan --locked` said to run `syncr lock`.
@Suite(.timeLimit(.minutes(10))) struct CacheFolderTests {
    @Test func theManifestsOwnFolderIsRefused() {
        let rendered = errors("""
            version: 1
            cache: .
            downloads:
              - { url: "https://example.com/a", to: out/a.bin }
            """)
        #expect(rendered == """
            syncr.yml:2:8: error: cache: ".": it is the manifest's own folder: syncr's own files (records.journal, syncr.lock, the data of each entry) would lie among the downloads, and the cache's lock where 'syncr lock' writes the lockfile; give the cache a folder of its own (e.g. cache: .syncr-cache)
            cache: .
                   ^
            """)
    }

    @Test(arguments: ["./", "sub/..", "/work/proj", "/work/proj/", "..", "/"])
    func theManifestsFolderOrOneAboveItIsRefused(cache: String) {
        let rendered = errors("version: 1\ncache: \(cache)\n")
        #expect(rendered.contains("error: cache: \"\(cache)\": it "), "\(rendered)")
        #expect(rendered.contains("give the cache a folder of its own (e.g. cache: .syncr-cache)"), "\(rendered)")
    }

    @Test(arguments: [".syncr-cache", "../proj-cache", "/var/cache/syncr", "./sub"])
    func aFolderOfItsOwnPasses(cache: String) {
        #expect(errors("version: 1\ncache: \(cache)\n") == "OK")
    }

    /// A link to the manifest's folder is that folder.
    @Test func aLinkToTheManifestsFolderIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncr-cache-link-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/here", withDestinationPath: ".")
        do {
            _ = try ManifestLoader.parse(text: "version: 1\ncache: here\n", path: "syncr.yml", directory: folder, environment: [:])
            Issue.record("parsed")
        } catch {
            #expect(error.description.contains("cache: \"here\": it is the manifest's own folder"), "\(error)")
        }
    }

    /// The command line's `--cache` is held to the same rule.
    @Test func aCommandLineCacheIsAskedAlike() throws {
        let manifest = try ManifestLoader.parse(text: "version: 1\n", path: "syncr.yml", directory: "/work/proj", environment: [:])
        #expect(manifest.cacheFolderProblem("/work/proj")?.hasPrefix("it is the manifest's own folder") == true)
        #expect(manifest.cacheFolderProblem("/work")?.hasPrefix("it holds the manifest's folder") == true)
        #expect(manifest.cacheFolderProblem("/work/proj/.syncr-cache") == nil)
    }
}
