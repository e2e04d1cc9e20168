import SyncrLock
import Foundation
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// Multipart uploads syncr started and nothing will finish (their entry left the manifest, or
/// was pruned for its age): aborted when `syncr cache prune` removes their record, so the store
/// does not keep (and bill) their parts. A failure is not fatal: the store's lifecycle rules, or
/// `aws s3api abort-multipart-upload`, remain.
enum S3AbandonedUploads {
    /// Sends AbortMultipartUpload for the upload a record describes, and waits for the answer.
    /// - Returns: whether the store confirmed it (or no longer knew the upload).
    @discardableResult
    static func abort(recordAt path: String) -> Bool {
        guard let bytes = FS.readAll(path),
              let record = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)),
              let region = record.region else { return false }
        let options = S3Options(endpoint: record.endpoint, region: region, pathStyle: record.pathStyle,
                                profile: record.profile, anonymous: record.anonymous ?? false)
        guard let configuration = try? S3Configuration.resolve(options, environment: ProcessInfo.processInfo.environment)
        else { return false }
        let object = S3Object(location: S3Location(bucket: record.bucket, key: record.key), configuration: configuration)
        let display = "s3://\(record.bucket)/\(record.key)"
        let request = object.sign(HTTPRequest(method: .delete, url: object.url(query: [("uploadId", record.uploadID)]),
                                              displayURL: display, connectTimeoutMilliseconds: 10_000,
                                              lowSpeedTimeSeconds: 30))
        let engine = TransferEngine(configuration: .init(maxConnectionsPerHost: 1))
        defer { engine.shutdown() }
        let done = DispatchSemaphore(value: 0)
        let confirmed = Locked(false)
        // Prune runs on the main thread, outside the cooperative pool: waiting here blocks
        // nothing the task needs.
        Task {
            if case .success(let response) = await engine.perform(request, sink: DiscardSink()) {
                confirmed.withLock { $0 = response.head.isSuccess || response.head.status == 404 }
            }
            done.signal()
        }
        done.wait()
        return confirmed.withLock { $0 }
    }
}
