import Foundation
import Testing
@testable import SyncrCore

/// A cache folder a library caller names that cannot be made (a file in its place; the CLI
/// checks `--cache` before the run, the library did not) fails every download once, naming the
/// cache folder: each failed on a file below it ("….data: cannot open: Not a directory").
@Suite(.timeLimit(.minutes(5))) struct UnusableCacheFolderTests {
    @Test func everyDownloadFailsNamingTheCacheFolder() async throws {
        let project = try ScriptedProject()
        let file = project.root + "/not-a-folder"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let server = ScriptedTransport(serving: Resource(bytes: Resource.pattern(100)))
        let session = Session(manifest: project.manifest([project.download("a.bin"), project.download("b.bin", index: 1)]),
                              options: RunOptions(cacheDirectory: file), transport: server)
        defer { session.close() }
        let results = await session.apply().results
        #expect(results.map(\.status) == [.failed, .failed])
        for result in results {
            #expect(result.errorText == "\(file): cannot create the folder (a file is in the way): Not a directory",
                    "\(result.errorText ?? "")")
        }
        #expect(server.requests.isEmpty, "nothing fetched into a cache that cannot hold it")
    }
}
