import Foundation
import Testing
@testable import SyncrCore
import SyncrDigest
import SyncrLock
import SyncrManifest

/// The part SHA-256s computed beside a file's SHA-256 are the parts' real SHA-256s, numbered as
/// the multipart upload numbers them, and they stop when the file's is done.
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

    static func sha256(_ bytes: ArraySlice<UInt8>) -> String {
        Digest.hex(.sha256, of: Array(bytes))
    }

    /// Part number -> SHA-256 of the 3 parts of `setUp`'s file.
    static func parts(_ bytes: [UInt8]) -> [Int: String] {
        [1: sha256(bytes[0..<5 << 20]), 2: sha256(bytes[5 << 20..<10 << 20]), 3: sha256(bytes[(10 << 20)...])]
    }

    /// Not stopped, every part gets its SHA-256, numbered as the upload numbers parts.
    @Test func everyPartHasItsSHA256WhenNotStopped() throws {
        let tmp = try TemporaryFolder()
        let (upload, tree, bytes) = try Self.setUp(tmp)
        let parts = S3PartDigests.compute(tree.files, preferred: upload.partSize, until: Locked(false))
        let found = try #require(parts.byFile["big.bin"])
        #expect(found == Self.parts(bytes))
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
        let expected = Self.parts(bytes)
        for (number, sha256) in parts.byFile["big.bin"] ?? [:] { #expect(expected[number] == sha256, "part \(number)") }
    }

    /// A file hash that is done at once stops the part hashes: whatever was computed is right,
    /// and the rest is left to the upload.
    @Test func aQuickHashingStopsThePartHashes() async throws {
        let tmp = try TemporaryFolder()
        let (upload, tree, bytes) = try Self.setUp(tmp)
        let (_, parts) = try await S3PartDigests.beside(upload, tree: tree) { 0 }
        let expected = Self.parts(bytes)
        for (number, sha256) in parts.byFile["big.bin"] ?? [:] { #expect(expected[number] == sha256, "part \(number)") }
    }

    /// A hashing failure is the caller's error, after the part hashes stopped.
    @Test func aHashingFailureIsThrown() async throws {
        struct Boom: Error {}
        let tmp = try TemporaryFolder()
        let (upload, tree, _) = try Self.setUp(tmp)
        await #expect(throws: Boom.self) {
            _ = try await S3PartDigests.beside(upload, tree: tree) { () throws -> Int in throw Boom() }
        }
    }

    /// Files below the threshold go up in one PutObject: no part hashes.
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
