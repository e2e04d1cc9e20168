import SyncrLock

/// One entry's events on their way to the reporter, with its `.progress` counts made to go
/// only up, as `ProgressEvent.progress` promises: a split download's lead connection and its
/// pieces report their own views of one file (the lead's own count, the pieces' total), and
/// they interleaved, so a caller's progress bar jumped between them; an upload's count fell
/// back when an attempt failed (to what the server took) and began again with the next. A
/// `.note` that `startsOver` lets the count begin again at 0.
final class ProgressGate: ProgressReporter {
    private let inner: any ProgressReporter
    private let highest = Locked<Int64>(0)

    init(_ inner: any ProgressReporter) {
        self.inner = inner
    }

    func report(_ event: ProgressEvent) {
        switch event {
        case .progress(let index, let transferred, let total, let kind, let object):
            let count = highest.withLock { highest -> Int64 in
                highest = max(highest, transferred)
                return highest
            }
            inner.report(.progress(index: index, transferred: count, total: total, kind: kind, object: object))
        case .note(_, let note, _, _) where note.startsOver:
            highest.withLock { $0 = 0 }
            inner.report(event)
        default:
            inner.report(event)
        }
    }
}
