#if canImport(Glibc)
import Glibc
#endif

/// Something at the end of a run that failed no entry but leaves its files less safe than
/// promised: every entry is in place, and a power cut before the disk wrote the rest could undo
/// some of it. `apply` reports it (`ApplyReport.warnings`) instead of dropping it.
public enum RunWarning: Sendable, Equatable, CustomStringConvertible {
    /// A folder that files were moved into could not be flushed: after a power cut those files
    /// may be missing from it (the run's own flushes of the files themselves succeeded).
    case folderNotFlushed(FileError)
    /// The cache's records of this run could not be written or flushed: the entries they
    /// vouch for may be downloaded again (never a wrong file), after a power cut or at once.
    case recordsNotFlushed(FileError)

    /// The file error behind the warning.
    public var error: FileError {
        switch self {
        case .folderNotFlushed(let error), .recordsNotFlushed(let error): return error
        }
    }

    /// A stable name for scripts: `folder_not_flushed`, `records_not_flushed`.
    public var code: String {
        switch self {
        case .folderNotFlushed: return "folder_not_flushed"
        case .recordsNotFlushed: return "records_not_flushed"
        }
    }

    /// One line: what failed, and what it means for the files.
    public var description: String {
        switch self {
        case .folderNotFlushed(let error):
            return "\(error); the files moved into it are in place, but a power cut before the disk writes "
                + "the folder could lose them" + Self.advice(error)
        case .recordsNotFlushed(let error):
            return "\(error); the files are in place, but the next run may download some of them again "
                + "(their records were not written, or may not survive a power cut)" + Self.advice(error)
        }
    }

    /// What to do, where the error's own words do not say it already (a full disk, missing
    /// permissions and a read-only file system do).
    private static func advice(_ error: FileError) -> String {
        error.errno == EIO ? "; the disk reported an error: check it (dmesg), then run apply again" : ""
    }
}
