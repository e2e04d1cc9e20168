#if canImport(Glibc)
import Glibc
#endif
import SyncrLock
import SyncrManifest

/// The SHA-256s of a large file's parts, computed on the other core while the file's is.
///
/// A multipart upload cannot start before the whole file's SHA-256 is known (it is stored as
/// object metadata, given when the upload is created), and that hash is one sequential pass over
/// the file, on one core. The other core is idle meanwhile, and so is the store: it computes
/// the parts' `x-amz-checksum-sha256`s, at the same pace, so that for one large file they are
/// all done when the upload starts, and none is computed while the store competes for the
/// CPU (a 1 GiB upload here: 6.08 s instead of 6.59, syncr's CPU 2.3 s instead of 3.0, when
/// the parts carried MD5s, of which the other core did less than half in time). The part
/// hashes stop when the file's is done: they delay it by the part being hashed at most.
struct S3PartDigests: Sendable {
    /// Relative path -> part number -> SHA-256 (hex), for the parts done in time.
    var byFile: [String: [Int: String]] = [:]

    /// Runs `hashing` and, beside it, the part SHA-256s of the tree's files that will go up in
    /// parts, in file order, until `hashing` returns.
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

    /// SHA-256 of each part in order until `stop` is set; a file that cannot be read gives no
    /// more (the upload then reports it, naming it).
    static func compute(_ files: [UploadTree.File], preferred: Int64, until stop: Locked<Bool>) -> S3PartDigests {
        var result = S3PartDigests()
        for file in files {
            let size = file.fingerprint.size
            let partSize = S3MultipartUpload.partSize(size: size, preferred: preferred)
            var number = 1
            while Int64(number - 1) * partSize < size, !stop.withLock({ $0 }), !Cancellation.isRequested {
                let offset = Int64(number - 1) * partSize
                guard let sha256 = try? S3MultipartUpload.digest(.sha256, of: file.path, offset: offset,
                                                                 length: min(partSize, size - offset)) else { return result }
                result.byFile[file.relative, default: [:]][number] = sha256
                number += 1
            }
        }
        return result
    }
}
