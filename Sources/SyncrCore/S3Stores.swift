import SyncrLock
import Foundation
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// The stores of `s3://` entries, resolved once per distinct `s3:` block and per process: the
/// environment and the shared credentials files are read once, and every request of every entry
/// with the same block is signed with the same keys.
enum S3Stores {
    private static let resolved = Locked<[S3Settings: Result<S3Configuration, S3ConfigError>]>([:])
    /// Endpoints that refused a part checksum (`PartChecksum`) in this process: their later
    /// multipart uploads carry Content-MD5 from the start, without a refused request each.
    private static let checksumRefusals = Locked<Set<String>>([])

    static func refusedChecksums(_ endpoint: String) -> Bool { checksumRefusals.withLock { $0.contains(endpoint) } }

    static func noteChecksumRefusal(_ endpoint: String) { _ = checksumRefusals.withLock { $0.insert(endpoint) } }

    /// The store an entry with these settings talks to, or why there is none.
    static func configuration(_ settings: S3Settings) -> Result<S3Configuration, S3ConfigError> {
        if let known = resolved.withLock({ $0[settings] }) { return known }
        let options = S3Options(endpoint: settings.endpoint, region: settings.region, pathStyle: settings.pathStyle,
                                profile: settings.profile, anonymous: settings.anonymous ?? false)
        let result = Result { () throws(S3ConfigError) in
            try S3Configuration.resolve(options, environment: ProcessInfo.processInfo.environment)
        }
        resolved.withLock { $0[settings] = result }
        return result
    }

    /// The secret keys and session tokens of every store the manifest's entries use, to mask.
    static func secrets(of manifest: Manifest) -> [String] {
        let settings = manifest.downloads.filter { $0.s3 != nil }.map(\.settings.s3)
            + manifest.uploads.filter { $0.s3 != nil }.map(\.settings.s3)
        return Set(settings).flatMap { (try? configuration($0).get())?.credentials?.secrets ?? [] }
    }

    /// Why an `s3://` entry cannot be signed for, worded for the operator; nil when it can (or
    /// the entry is not `s3://`).
    static func failure(url: Template, settings: Settings) -> String? {
        guard S3Location.isS3URL(url.expanded), case .failure(let error) = configuration(settings.s3) else { return nil }
        return "\(url.written): \(error)"
    }
}
