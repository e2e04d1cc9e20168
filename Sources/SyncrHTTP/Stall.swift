/// What a transfer was doing when nothing moved for its `stallMilliseconds`: the words of a
/// stall differ for a download, a body the server stopped taking, and an answer that never
/// came after the body.
public enum StallPhase: Sendable, Equatable {
    /// Receiving the answer, which had begun (a download's body).
    case receiving
    /// Sending the request body from `path` (a file, or `a form of N files`): the server took
    /// none of it, and nothing came back either.
    case sending(path: String)
    /// The body from `path` was sent whole, and no answer came.
    case awaitingAnswer(path: String)
}

/// Who set a request's time limits (`stallMilliseconds`, the connect timeout), so that a
/// message about a stall says where to change them.
public enum TimeoutOrigin: Sendable, Equatable {
    /// Nobody: the program's default.
    case builtIn
    /// The program's configuration (syncr's manifest: `timeout:` under `defaults:` or on the entry).
    case configured
    /// Not said: a request built without naming it (a library caller's own settings).
    case unstated
}
