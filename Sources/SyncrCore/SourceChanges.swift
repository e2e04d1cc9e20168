/// How an upload folder's files differ from those recorded at its last upload, as the plan
/// says it: "1 file changed, 2 added, 1 removed since the last upload". A removed file was
/// said as "1 file changed", which sent the reader looking for an edit.
struct SourceChanges: Equatable {
    /// Files in both whose content (or, where it matters, time) differs.
    var changed = 0
    /// Files that were not sent last time.
    var added = 0
    /// Files sent last time that are gone.
    var removed = 0

    /// Compares the files now with those recorded; `differs` tells two records of one name apart.
    init(_ now: [String: UploadRecord.SentFile], before: [String: UploadRecord.SentFile],
         differs: (_ old: UploadRecord.SentFile, _ new: UploadRecord.SentFile) -> Bool) {
        for (name, file) in now {
            if let old = before[name] {
                if differs(old, file) { changed += 1 }
            } else {
                added += 1
            }
        }
        removed = before.keys.count { now[$0] == nil }
    }

    init(changed: Int = 0, added: Int = 0, removed: Int = 0) {
        (self.changed, self.added, self.removed) = (changed, added, removed)
    }

    var isEmpty: Bool { changed == 0 && added == 0 && removed == 0 }

    /// The plan's reason, counting files: "1 file changed", "2 files added, 1 removed".
    var reason: String {
        let parts = [(changed, "changed"), (added, "added"), (removed, "removed")].filter { $0.0 > 0 }
        let said = parts.enumerated().map { i, part in
            i == 0 ? "\(part.0) file\(part.0 == 1 ? "" : "s") \(part.1)" : "\(part.0) \(part.1)"
        }
        return said.joined(separator: ", ") + " since the last upload"
    }
}
