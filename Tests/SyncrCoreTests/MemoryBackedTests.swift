import Foundation
import Testing
@testable import SyncrCore

/// Which caches are in memory, where a flush does nothing (`FS.isMemoryBacked`).
@Suite(.timeLimit(.minutes(5))) struct MemoryBackedTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/shm")))
    func devShmIsInMemoryEvenBeforeAFolderExists() {
        #expect(FS.isMemoryBacked("/dev/shm"))
        #expect(FS.isMemoryBacked("/dev/shm/syncr-none-\(UUID().uuidString)/cache"))
    }

    @Test func theRootFileSystemOfThisMachineIsNot() {
        // /proc is procfs, not memory-backed storage for files.
        #expect(!FS.isMemoryBacked("/proc"))
    }
}
