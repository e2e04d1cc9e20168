#if canImport(Glibc)
import Glibc
#endif
import SyncrLock
import SyncrManifest

/// The MD5s of a large file's parts, computed on the other core while the file's SHA-256 is.
///
/// A multipart upload cannot start before the whole file's SHA-256 is known (it is stored as
/// object metadata, given when the upload is created), and that hash is one sequential pass over
/// the file, on one core. The other core is idle meanwhile, and so is the store: it computes
/// the first parts' `Content-MD5`s, which the upload would otherwise compute while competing
/// with the store for the CPU. The MD5s stop when the SHA-256 is done, so they never delay it.
struct S3PartDigests: Sendable {
    /// Relative path -> part number -> MD5 (hex), for the parts done in time.
    var byFile: [String: [Int: String]] = [:]

    /// Runs `hashing` and, beside it, the part MD5s of the tree's files that will go up in parts,
    /// in file order, until `hashing` returns.
    static func beside<T: Sendable>(_ upload: Upload, tree: UploadTree,
                                    _ hashing: @escaping @Sendable () throws -> T) async throws -> (T, S3PartDigests) {
        let large = tree.files.filter { $0.fingerprint.size >= upload.multipartThreshold }
        guard !large.isEmpty else { return (try await BlockingIO.run(hashing), S3PartDigests()) }
        let stop = Locked(false)
        let preferred = upload.partSize
        async let parts = BlockingIO.run { Self.compute(large, preferred: preferred, until: stop) }
        let result: T
        do {
            result = try await BlockingIO.run(hashing)
        } catch {
            stop.withLock { $0 = true }
            _ = await (try? parts)
            throw error
        }
        stop.withLock { $0 = true }
        return (result, (try? await parts) ?? S3PartDigests())
    }

    /// MD5 of each part in order until `stop` is set; a file that cannot be read gives no MD5s
    /// (the upload then reports it, naming it).
    static func compute(_ files: [UploadTree.File], preferred: Int64, until stop: Locked<Bool>) -> S3PartDigests {
        var result = S3PartDigests()
        for file in files {
            let size = file.fingerprint.size
            let partSize = S3MultipartUpload.partSize(size: size, preferred: preferred)
            var number = 1
            while Int64(number - 1) * partSize < size, !stop.withLock({ $0 }) {
                let offset = Int64(number - 1) * partSize
                guard let md5 = try? S3MultipartUpload.readDigests(file.path, offset: offset, length: min(partSize, size - offset),
                                                                   sha256: false).md5 else { return result }
                result.byFile[file.relative, default: [:]][number] = md5
                number += 1
            }
        }
        return result
    }
}
