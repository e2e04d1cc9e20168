extension TransferEngine {
    /// Performs a request like `perform`, and also tells whether any of the request left before
    /// a failure: what the retry rule for non-idempotent requests (POST) needs.
    ///
    /// Redirects are followed here, one transfer per hop, as `request.redirects` allows (see
    /// `RedirectPolicy`); a redirect that is refused fails with `.redirect`. The sink sees only
    /// the final answer's body. A request with a `body` reads it from disk as curl sends it
    /// (again from the start on a 307/308); a body file that cannot be opened fails the attempt
    /// with `.local` before anything is sent.
    public func attempt(_ request: HTTPRequest, sink: ResponseSink) async -> TransferOutcome {
        var request = request
        switch TrustBundle.bundle(for: request.tls.extraAnchors) {
        case .success(let bundle): request.trustBundle = bundle
        case .failure(let error): return TransferOutcome(result: .failure(error), requestSent: false)
        }
        var state = RedirectState(request)
        var current = request
        while true {
            var outcome = await attemptOnce(current, sink: sink)
            // After a redirect, what went wrong went wrong at the target: its answer or failure
            // names it. An earlier hop reached a server: for the POST retry rule the request was sent.
            let target = state.hops > 0 ? URLParts(current.url)?.display : nil
            if let target {
                outcome.requestSent = true
                outcome.result = outcome.result.map { response in
                    var response = response
                    response.redirectedTo = target
                    response.credentialsWithheld = state.credentialsWithheld
                    return response
                }.mapError { $0.redirected(to: target) }
            }
            guard case .success(let response) = outcome.result else { return outcome }
            switch state.next(after: current, status: response.head.status, target: response.redirectTarget) {
            case .deliver:
                return outcome
            case .refuse(let error):
                return TransferOutcome(result: .failure(error), requestSent: true)
            case .follow(let next):
                current = next
            }
        }
    }
}
