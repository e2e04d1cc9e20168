import SyncrHTTP
import SyncrManifest
import SyncrS3

extension Session {
    /// A HEAD answer has no body, so a failed HEAD of an `s3://` object does not say whether the
    /// bucket or the key is missing, or why access was refused: ask again with a one-byte GET,
    /// whose answer carries S3's XML error. Other failures are returned as they are.
    static func explained(_ error: TransferError, builder: RequestBuilder, engine: any Transport) async -> TransferError {
        guard builder.s3 != nil, case .status(_, let code, _, let body, _, _) = error, body.isEmpty, (400..<500).contains(code)
        else { return error }
        switch await engine.perform(builder.get(range: ByteRange(start: 0, end: 0)), sink: DiscardSink()) {
        case .success(let response):
            return response.statusError(url: builder.displayURL) ?? error
        case .failure:
            return error
        }
    }
}
