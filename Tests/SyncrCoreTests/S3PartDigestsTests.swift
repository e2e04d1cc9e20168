import Foundation
import Testing
@testable import SyncrCore
import SyncrDigest
import SyncrLock
import SyncrManifest

/// The part MD5s computed beside a file's SHA-256 are the parts' real MD5s, numbered as the
/// multipart upload numbers them, and they never hold up the SHA-256.
@Suite(.timeLimit(.minutes(5))) struct S3PartDigestsTests {
    /// A 12 MiB + 5 byte file, a threshold of 5 MiB and 5 MiB parts: 3 parts, the last short.
    static func setUp(_ tmp: TemporaryFolder) throws -> (Upload, UploadTree, [UInt8]) {
        var bytes = [UInt8](repeating: 0, count: 12 << 20 + 5)
        var x: UInt32 = 12345
        for i in bytes.indices { x = x &* 1_103_515_245 &+ 12345; bytes[i] = UInt8(truncatingIfNeeded: x >> 16) }
        let path = tmp.path + "/big.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var upload = Upload(index: 0, location: SourceLocation(file: "syncr.yml", line: 1, column: 1), from: "big.bin",
                            source: path, url: Template(literal: "s3://b/big.bin"), method: .put, settings: .builtIn)
        upload.multipartThreshold = 5 << 20
        upload.partSize = 5 << 20
        return (upload, try UploadTree.scan(path), bytes)
    }

    static func md5(_ bytes: ArraySlice<UInt8>) -> String {
        Digest.hex(.md5, of: Array(bytes))
    }

    /// Not stopped, every part gets its MD5, numbered as the upload numbers parts.
    @Test func everyPartHasItsMD5WhenNotStopped() throws {
        let tmp = try TemporaryFolder()
        let (upload, tree, bytes) = try Self.setUp(tmp)
        let parts = S3PartDigests.compute(tree.files, preferred: upload.partSize, until: Locked(false))
        let found = try #require(parts.byFile["big.bin"])
        #expect(found == [1: Self.md5(bytes[0..<5 << 20]), 2: Self.md5(bytes[5 << 20..<10 << 20]),
                          3: Self.md5(bytes[(10 << 20)...])])
    }

    /// Beside a hashing that takes a while, whatever parts were done are right.
    @Test func thePartsDoneBesideTheHashingAreRight() async throws {
        let tmp = try TemporaryFolder()
        let (upload, tree, bytes) = try Self.setUp(tmp)
        let (value, parts) = try await S3PartDigests.beside(upload, tree: tree) { () -> Int in
            Thread.sleep(forTimeInterval: 0.5)
            return 7
        }
        #expect(value == 7)
        let expected = [1: Self.md5(bytes[0..<5 << 20]), 2: Self.md5(bytes[5 << 20..<10 << 20]), 3: Self.md5(bytes[(10 << 20)...])]
        for (number, md5) in parts.byFile["big.bin"] ?? [:] { #expect(expected[number] == md5, "part \(number)") }
    }

    /// A SHA-256 that is done at once stops the MD5s: whatever was computed is right, and the
    /// rest is left to the upload.
    @Test func aQuickHashingStopsTheMD5s() async throws {
        let tmp = try TemporaryFolder()
        let (upload, tree, bytes) = try Self.setUp(tmp)
        let (_, parts) = try await S3PartDigests.beside(upload, tree: tree) { 0 }
        let expected = [1: Self.md5(bytes[0..<5 << 20]), 2: Self.md5(bytes[5 << 20..<10 << 20]), 3: Self.md5(bytes[(10 << 20)...])]
        for (number, md5) in parts.byFile["big.bin"] ?? [:] { #expect(expected[number] == md5, "part \(number)") }
    }

    /// A hashing failure is the caller's error, after the MD5s stopped.
    @Test func aHashingFailureIsThrown() async throws {
        struct Boom: Error {}
        let tmp = try TemporaryFolder()
        let (upload, tree, _) = try Self.setUp(tmp)
        await #expect(throws: Boom.self) {
            _ = try await S3PartDigests.beside(upload, tree: tree) { () throws -> Int in throw Boom() }
        }
    }

    /// Files below the threshold go up in one PutObject: no part MD5s.
    @Test func smallFilesHaveNone() async throws {
        let tmp = try TemporaryFolder()
        var (upload, tree, _) = try Self.setUp(tmp)
        upload.multipartThreshold = 64 << 20
        let (_, parts) = try await S3PartDigests.beside(upload, tree: tree) { () -> Int in
            Thread.sleep(forTimeInterval: 0.5)
            return 0
        }
        #expect(parts.byFile.isEmpty)
    }
}
