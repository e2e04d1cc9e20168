/// What carries a request to a server and its answer back: `TransferEngine` (libcurl), or, in
/// tests, a stand-in that plays a scripted server with no socket.
///
/// The one call is the seam every request of syncr goes through: perform this request (its
/// redirects followed as `request.redirects` allows) and deliver the final answer to `sink`.
/// A conforming type drives the sink as `ResponseSink` documents: `responseStarted` once with the
/// head of a 2xx answer, then `write` with its body in order (offering a piece again after a
/// `.pause`, once the sink calls the handler given to `onResume`), then `finish` once, and
/// nothing after a `.stop` or `.fail`; and it awaits `settle` before it returns. The body of a
/// non-2xx answer never reaches the sink; its start is in `HTTPResponse.errorBody`.
///
/// Class-bound, so that `any Transport` is a reference and a witness table: calling through it
/// costs no allocation and no more than one indirect call per request.
public protocol Transport: AnyObject, Sendable {
    /// Performs `request`, feeding the final answer's 2xx body to `sink`.
    ///
    /// - Returns: `.success` for every answer the server gave (4xx and 5xx included), `.failure`
    ///   when no complete answer arrived or the sink refused it; and whether any of the request
    ///   may have reached the server (what the retry rule for POST needs).
    func attempt(_ request: HTTPRequest, sink: ResponseSink) async -> TransferOutcome
}

extension Transport {
    /// Performs a request, feeding a 2xx body to `sink`.
    ///
    /// Returns `.success` for every answer the server gave (including 4xx/5xx, whose body start
    /// is in `errorBody`), and `.failure` when no complete answer arrived or the sink refused it.
    public func perform(_ request: HTTPRequest, sink: ResponseSink) async -> Result<HTTPResponse, TransferError> {
        await attempt(request, sink: sink).result
    }
}
