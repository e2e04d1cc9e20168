import SyncrHTTP
import SyncrManifest
import SyncrS3

/// How a failed request to an object store is worded: S3's error code and message, the bucket
/// and key, and which credentials were used (never the secret).
enum S3FailureText {
    /// The message for `error`, or nil when it is not an answer from the store (a connection
    /// failure is worded as for any server).
    static func describe(_ error: TransferError, object: S3Object) -> String? {
        guard case .status(let url, let code, _, let body) = error else { return nil }
        let reason = HTTPStatus.reason(code)
        let status = "HTTP \(code)" + (reason.isEmpty ? "" : " " + reason)
        let what = "bucket \(object.location.bucket), key \(object.location.key.isEmpty ? "(none)" : object.location.key)"
        guard let answer = S3ErrorResponse(parsing: body) else {
            // HEAD answers carry no body, so only the status tells.
            let hint = code == 403 ? S3ErrorResponse(code: "AccessDenied").advice(credentials: object.configuration.credentials)
                : code == 404 ? "no such bucket or key" : nil
            return "\(url): \(status) (\(what))" + (hint.map { "; \($0)" } ?? "")
        }
        let message = answer.message.isEmpty ? "" : ": \(answer.message)"
        let advice = answer.advice(credentials: object.configuration.credentials).map { "; \($0)" } ?? ""
        return "\(url): \(status), \(answer.code)\(message) (\(what))\(advice)"
    }
}

extension Session {
    /// A HEAD answer has no body, so a failed HEAD of an `s3://` object does not say whether the
    /// bucket or the key is missing, or why access was refused: ask again with a one-byte GET,
    /// whose answer carries S3's XML error. Other failures are returned as they are.
    static func explained(_ error: TransferError, builder: RequestBuilder, engine: TransferEngine) async -> TransferError {
        guard builder.s3 != nil, case .status(_, let code, _, let body) = error, body.isEmpty, (400..<500).contains(code)
        else { return error }
        switch await engine.perform(builder.get(range: ByteRange(start: 0, end: 0)), sink: DiscardSink()) {
        case .success(let response):
            return response.statusError(url: builder.displayURL) ?? error
        case .failure:
            return error
        }
    }
}
