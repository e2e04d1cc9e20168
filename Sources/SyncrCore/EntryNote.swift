/// Something worth knowing about an entry that did not fail it: the download went on another
/// way. `description` is the operator's line, worded here and nowhere else.
public enum EntryNote: Sendable, Equatable, CustomStringConvertible {
    /// The partial could not be resumed: the server gave no strong ETag or Last-Modified to ask
    /// `If-Range` with, so the download restarted from byte 0.
    case noValidatorToResume
    /// The server ignored the Range request (it answered 200 with the whole file); restarted
    /// from byte 0.
    case rangeIgnored
    /// The answer to the resume request did not fit the cached bytes (`detail` says how);
    /// restarted from byte 0.
    case resumeDidNotFit(detail: String)
    /// Parallel pieces were given up for one stream from byte 0: the server answered a Range
    /// request with the whole file (`detail` nil), or with a piece that did not fit (`detail`).
    case fellBackToOneStream(detail: String?)
    /// The lead request got the start of a file below `min_split`, but the server gave no
    /// validator to ask for the rest against; restarted from byte 0 on one stream.
    case noValidatorForTheRest
    /// The server answered the resume request with 416: the file is shorter than the cached
    /// bytes; restarted from byte 0.
    case resumePastTheEnd
    /// A multipart upload to an object store went on from where a killed run left it: `parts`
    /// parts were already in the store and matched the file.
    case multipartResumed(target: String, parts: Int)
    /// Links in an upload's folder that were not sent, since they lead to a folder or to
    /// nothing (a link to a file is sent as that file): their paths in the folder.
    case linksNotSent([String])
    /// The archive was unpacked, with things worth knowing (`UnpackSummary.notes`): files that
    /// `strip_components` left out, data after the end of a tar that was ignored.
    case unpacked(notes: [String])

    /// The operator's line.
    public var description: String {
        switch self {
        case .noValidatorToResume:
            return "the server gave no strong ETag or Last-Modified to resume against; restarted from byte 0"
        case .rangeIgnored:
            return "the server ignored the Range request; restarted from byte 0"
        case .resumeDidNotFit(let detail):
            return "the answer to the resume request did not fit the cached bytes (\(detail)); restarted from byte 0"
        case .fellBackToOneStream(let detail):
            let why = detail.map { "a Range answer did not fit (\($0))" }
                ?? "the server answered a Range request with the whole file"
            return "\(why); fell back to one stream from byte 0"
        case .noValidatorForTheRest:
            return "the server gave no strong ETag or Last-Modified to fetch the rest of the file against; restarted from byte 0"
        case .multipartResumed(let target, let parts):
            return "\(target): resumed a multipart upload, \(parts) part\(parts == 1 ? "" : "s") already in the store"
        case .linksNotSent(let paths):
            let shown = paths.prefix(5).joined(separator: ", ") + (paths.count > 5 ? " and \(paths.count - 5) more" : "")
            return "\(paths.count) link\(paths.count == 1 ? "" : "s") in the folder not sent, leading to a folder or to "
                + "nothing (a link to a file is sent as the file): \(shown)"
        case .resumePastTheEnd:
            return "the server answered the resume request with 416 Range Not Satisfiable (the file is shorter than the "
                + "cached bytes); restarted from byte 0"
        case .unpacked(let notes):
            return "unpacked, but " + notes.joined(separator: "; ")
        }
    }

    /// Whether the download went back to byte 0: what was in place before (a resume's cached
    /// part) no longer counts, in progress or in the result (a planned resume ends a restart).
    public var startsOver: Bool {
        switch self {
        case .noValidatorToResume, .rangeIgnored, .resumeDidNotFit, .fellBackToOneStream, .noValidatorForTheRest,
             .resumePastTheEnd:
            return true
        case .multipartResumed, .linksNotSent, .unpacked:
            return false
        }
    }

    /// This note with its text masked by `redactor`.
    func scrubbed(_ redactor: Redactor) -> EntryNote {
        switch self {
        case .noValidatorToResume, .rangeIgnored, .noValidatorForTheRest, .resumePastTheEnd: return self
        case .linksNotSent(let paths): return .linksNotSent(paths.map(redactor.scrub))
        case .unpacked(let notes): return .unpacked(notes: notes.map(redactor.scrub))
        case .multipartResumed(let target, let parts): return .multipartResumed(target: redactor.scrub(target), parts: parts)
        case .resumeDidNotFit(let detail): return .resumeDidNotFit(detail: redactor.scrub(detail))
        case .fellBackToOneStream(let detail): return .fellBackToOneStream(detail: detail.map(redactor.scrub))
        }
    }
}
