import SyncrLock
import Foundation
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// Multipart uploads syncr started and nothing will finish (their entry left the manifest, or
/// was pruned for its age): aborted when `syncr cache prune` removes their record, so the store
/// does not keep (and bill) their parts. An upload that cannot be aborted keeps its record (see
/// `CachePrune.remove`): forgotten, nothing would ever abort it.
enum S3AbandonedUploads {
    /// Why an abandoned upload could not be aborted: what the message names.
    struct Failure: Error, Sendable {
        var bucket: String
        var key: String
        var uploadID: String
        /// The store's endpoint as recorded (nil: AWS), for the command that aborts it by hand.
        var endpoint: String?
        /// What went wrong: no credentials, the store's answer, no connection.
        var reason: String
    }

    /// Sends AbortMultipartUpload for the upload a record describes, and waits for the answer.
    /// A record that cannot be read names no upload: nothing to abort.
    /// - Throws: `Failure` when the store did not confirm it (and did not say it no longer
    ///   knows the upload), so that the caller keeps the record for another try.
    static func abort(recordAt path: String) throws(Failure) {
        guard let bytes = FS.readAll(path, limit: Cache.listRecordLimit),
              let record = try? JSONDecoder().decode(MultipartRecord.self, from: Data(bytes)),
              let region = record.region else { return }
        func failure(_ reason: String) -> Failure {
            Failure(bucket: record.bucket, key: record.key, uploadID: record.uploadID, endpoint: record.endpoint, reason: reason)
        }
        let options = S3Options(endpoint: record.endpoint, region: region, pathStyle: record.pathStyle,
                                profile: record.profile, anonymous: record.anonymous ?? false)
        let configuration: S3Configuration
        do {
            configuration = try S3Configuration.resolve(options, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw failure(error.description)
        }
        let object = S3Object(location: S3Location(bucket: record.bucket, key: record.key), configuration: configuration)
        let display = "s3://\(record.bucket)/\(record.key)"
        let request = object.sign(HTTPRequest(method: .delete, url: object.url(query: [("uploadId", record.uploadID)]),
                                              displayURL: display, connectTimeoutMilliseconds: 10_000,
                                              lowSpeedTimeSeconds: 30))
        let engine = TransferEngine(configuration: .init(maxConnectionsPerHost: 1))
        defer { engine.shutdown() }
        let done = DispatchSemaphore(value: 0)
        let answer = Locked<String?>("no answer")
        // Prune runs on the main thread, outside the cooperative pool: waiting here blocks
        // nothing the task needs.
        Task {
            switch await engine.perform(request, sink: DiscardSink()) {
            case .success(let response) where response.head.isSuccess || response.head.status == 404:
                answer.withLock { $0 = nil }
            case .success(let response):
                let said = S3ErrorResponse(parsing: response.errorBody).map { "\($0.code): \($0.message)" }
                    ?? "HTTP \(response.head.status)"
                answer.withLock { $0 = "the store answered \(said)" }
            case .failure(let error):
                answer.withLock { $0 = error.description }
            }
            done.signal()
        }
        done.wait()
        if let reason = answer.withLock({ $0 }) { throw failure(reason) }
    }
}
