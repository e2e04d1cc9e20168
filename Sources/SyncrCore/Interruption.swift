/// An entry stopped because its task was cancelled (the run got SIGINT or SIGTERM): not a
/// failure of the server or of the entry, so it is reported as `.interrupted` and never
/// retried. What was kept is read from the entry's record when the result is made.
struct Interrupted: Error {}
