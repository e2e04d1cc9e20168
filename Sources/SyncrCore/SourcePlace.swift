import SyncrLock

/// Where the bytes of one fetch come from, for `Downloader.sameSource`: the first place known
/// (the record's, the lead's, or the first answer's), against which every later answer is
/// checked. Shared by the pieces' sinks, on the engine thread.
final class SourcePlace: Sendable {
    private let place: Locked<String?>
    private let redactor: Redactor

    init(_ known: String?, redactor: Redactor) {
        place = Locked(known)
        self.redactor = redactor
    }

    /// `check`, as a sink takes it.
    var checker: @Sendable (String) -> Bool { { [self] reached in check(reached) } }

    /// The place settled on, once one is known.
    var settled: String? { place.withLock { $0 } }

    /// Whether an answer that ended at `reached` (after redirects) comes from the place; the
    /// first answer sets it when none is known.
    func check(_ reached: String) -> Bool {
        let here = redactor.scrubLocation(reached)
        return place.withLock { place in
            guard let first = place else {
                place = here
                return true
            }
            return first == here
        }
    }
}
