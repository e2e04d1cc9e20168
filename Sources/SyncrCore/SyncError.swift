import SyncrArchive
import SyncrHTTP

/// Why an entry failed, could not be planned, or was stopped: one case per kind of trouble, with
/// the facts a caller needs to act on it. `description` is the operator's message (the text the
/// CLI prints and writes to its reports), worded in one place: `SyncError+Text.swift`.
///
/// Every text in it (URLs, paths, server bodies) has the run's secrets masked already.
/// A new kind of trouble (an object store's own errors, say) is a new case here; the compiler
/// then asks for its wording (`SyncError+Text.swift`), its `code` (`SyncError+Code.swift`, a
/// new word: codes never change) and its masking (`scrubbed` in `SyncError+Transfer.swift`).
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: a request failed (`retries` says how the retry loop ended and what the cache keeps)

    /// The server answered with an error status (`body`: the start of its answer, if it gave one).
    /// `proxy`: the HTTP proxy from the environment that forwarded the (plain-http) request,
    /// which may have given the answer itself; nil when it can only be the server's.
    /// After 401 or 403, `sent` says where the credentials the server refused came from (or why
    /// none went); nil for other statuses and for object stores, which have their own words.
    case http(status: Int, url: String, body: String, retries: Retries, proxy: EnvironmentProxy? = nil,
              sent: SentCredentials? = nil)
    /// The connection failed or broke: DNS, refused, reset, closed early (`code`: curl's, or
    /// `CURLE_COULDNT_CONNECT` for a server whose port refused a SOCKS5 proxy, as for a direct
    /// connection it refused).
    case connection(url: String, code: Int, message: String, retries: Retries)
    /// No progress for the configured time, or the connect timeout passed.
    case timedOut(url: String, message: String, retries: Retries)
    /// Nothing moved for `milliseconds` (the entry's `timeout`, set where `origin` says): no
    /// byte of an answer that had begun, or (`phase`) no byte of an upload's body sent and none
    /// received, or no answer after the body; with `lowSpeed`, bytes came, but fewer than that
    /// many a second (`low_speed`).
    case stalled(url: String, milliseconds: Int, lowSpeed: Int?, phase: StallPhase = .receiving,
                 origin: TimeoutOrigin = .unstated, retries: Retries)
    /// The TLS handshake failed or the certificate was not trusted.
    case tls(url: String, message: String, retries: Retries)
    /// The proxy set in the environment answered instead of the server, or cannot be used: it
    /// asks for credentials (`status` 407), refused to connect to the server (its answer to
    /// the CONNECT), or (`status` nil) a SOCKS proxy asks for credentials or refuses the
    /// server, the TLS handshake with an `https://` proxy failed, or its URL cannot be read or
    /// its name not resolved.
    /// `message` names the variable and what to change in it. Never retried.
    case proxy(url: String, status: Int?, message: String, retries: Retries)
    /// The answer broke the protocol (e.g. a `Content-Range` that is not what was asked).
    case invalidResponse(url: String, message: String, retries: Retries)
    /// A ranged request was answered with the whole file: the server will not resume.
    case rangeIgnored(url: String, retries: Retries)
    /// Too many redirects, or a redirect to a scheme other than http(s).
    case redirect(url: String, message: String, retries: Retries)
    /// Reading or writing local data failed while the request ran (not for lack of space).
    case transferIO(path: String, errno: Int32, message: String, retries: Retries)

    // MARK: the disk

    /// The file system at `path` has no room (`errno` ENOSPC, or EDQUOT over a quota):
    /// `needed` bytes (when known) against `available` free when it happened.
    case noSpace(path: String, needed: Int64?, available: Int64?, errno: Int32, during: DiskStep)
    /// The file system at `path` is read-only.
    case readOnly(path: String, during: DiskStep)
    /// A local file operation failed (open, write, flush, rename, ...).
    case file(FileError)
    /// The finished file could not be copied beside its destination (the cache is on another
    /// file system); it stays complete in the cache.
    case copyFailed(FileError)
    /// Something other than what the entry makes stands at `destination`: a folder, a device,
    /// or (when `wantsFolder`, for an unpacked archive) a file.
    case destinationBlocked(destination: String, wantsFolder: Bool)
    /// The folder `destination` goes into cannot be made: `obstacle` (a path, as in the
    /// manifest's folder, and what is in the way, such as "out: a file is in the way") blocks it.
    case folderBlocked(destination: String, obstacle: String)
    /// An unpacked archive's folder would replace one that syncr has no record of unpacking
    /// there, and that holds `holds` (a path inside it), which the archive does not: replacing
    /// it would delete what someone put there.
    case folderNotUnpacked(destination: String, holds: String)

    // MARK: the content

    /// The download's `algorithm` digest is `actual` (nil when it could not be computed), not
    /// the manifest's `expected`; the download was discarded and `destination` left as it was.
    case checksumMismatch(url: String, algorithm: String, expected: String, actual: String?, destination: String)
    /// The downloaded archive could not be unpacked into `destination`, which was left as it was.
    case unpack(url: String, destination: String, error: ArchiveError)

    // MARK: uploads

    /// An upload's `from:` cannot be sent: `path` is the file or folder, as written in the manifest.
    case uploadSource(path: String, problem: SourceProblem)
    /// A file changed while it was being uploaded (`change`: how, when known); it is not
    /// recorded as sent. The body's reader stops a request as soon as it sees the change.
    case changedWhileSending(path: String, change: String? = nil)
    /// In a locked run, what the URL serves is not what the lock pinned (`change`: size, ETag,
    /// where it leads); `lockfile` is the lock's name. The destination is left as it is.
    case lockedVersionChanged(lockfile: String, change: String)
    /// The folder of a `zip: true` upload could not be zipped.
    case zip(from: String, error: ArchiveError)

    // MARK: object stores

    /// An object store answered an `s3://` request with an error: the HTTP status, S3's error
    /// code and message when the answer carried them, the bucket and key, and what to check
    /// (naming where the credentials came from, never a secret). `proxy`: as for `.http`, the
    /// HTTP proxy from the environment that forwarded the (plain-http) request, and may have
    /// given the answer itself.
    case objectStore(status: Int, url: String, bucket: String, key: String, storeCode: String?,
                     storeMessage: String, advice: String?, retries: Retries, proxy: EnvironmentProxy? = nil)

    // MARK: the run

    /// The run was interrupted (SIGINT, SIGTERM) before the entry finished.
    case interrupted(Interruption)
    /// Anything else: a failure no other case describes, as its own text.
    case other(message: String)
}

extension SyncError {
    /// How a failed request's retry loop ended, and what it left for the next run.
    public struct Retries: Sendable, Equatable {
        /// Why the loop stopped; nil while it goes on (the error of a `.retrying` event).
        public var stop: Stop?
        /// Bytes of the entry kept in the cache, which the next run resumes from.
        public var kept: Int64
        /// Whether the next run can resume from `kept`: false when the server named no version
        /// of the file (no strong ETag, no Last-Modified) to ask a resume against (`If-Range`),
        /// so the next run starts over from byte 0 (`Planner`'s rule).
        public var resumes: Bool

        /// Why a retry loop stopped.
        public enum Stop: Sendable, Equatable {
            /// The failure is not worth another attempt (a 404, a certificate problem).
            case notRetryable
            /// Every retry (`retries:`) was used by attempts that made no progress.
            case exhausted(retries: Int)
            /// The server's `Retry-After` asked for a wait longer than `seconds`.
            case waitTooLong(seconds: Int)
            /// Not tried: another entry of the run used up its retries on this server, which
            /// nobody answered for (`UnreachableHosts`).
            case serverUnreachable
            /// Not retried, though the failure is one worth another attempt: the request was a
            /// POST that may have reached the server, and sending it again could act twice (the
            /// entry's `retry: true` allows it).
            case unsafeToRepeat
        }

        /// Creates the facts of a retry loop's end.
        public init(stop: Stop?, kept: Int64 = 0, resumes: Bool = true) {
            self.stop = stop
            self.kept = kept
            self.resumes = resumes
        }

        /// The failure of an attempt that will be retried.
        public static let willRetry = Retries(stop: nil)
        /// A failure that was not retried and kept nothing.
        public static let notRetried = Retries(stop: .notRetryable)
    }

    /// What was being done when the disk refused.
    public enum DiskStep: Sendable, Equatable {
        /// Reserving room in the cache for the download `entry` (its `to:`), before any byte came.
        case reserve(entry: String)
        /// Writing downloaded bytes into the cache; `kept` bytes are kept for the next run.
        case cacheWrite(kept: Int64)
        /// Unpacking a complete archive from the cache next to its destination.
        case unpack
        /// Copying the complete download `entry` (its `to:`) beside its destination.
        case copy(entry: String)
    }

    /// Why an upload's source cannot be sent.
    public enum SourceProblem: Sendable, Equatable {
        /// No such file or folder.
        case missing
        /// It exists but cannot be read (`errno`).
        case unreadable(errno: Int32)
        /// Neither a regular file nor a folder (a device, a socket).
        case notAFileOrFolder
        /// A folder with no file in it.
        case emptyFolder
        /// `zip: true` was given for a file, not a folder.
        case zipNeedsFolder
        /// Two names in the folder differ only in Unicode normalization (`café` composed and
        /// decomposed): two files on disk, one name to the record of what was sent.
        case namesDifferOnlyInNormalization(String, String)
        /// A name in the folder is not UTF-8 (`name`: its path in the folder, each byte that is
        /// not as `\xNN`): it cannot be written in a URL, nor told apart in the record.
        case nameNotUTF8(String)
    }

    /// Where a run's interruption found an entry.
    public enum Interruption: Sendable, Equatable {
        /// Before the entry started: nothing was done.
        case beforeStart
        /// While asking the server about it (planning).
        case whileAsking
        /// While downloading: `kept` bytes (of `size`, when known) wait in the cache for the next
        /// run; 0 when none were kept.
        /// `resumes` false: the next run cannot go on from them and starts over (no validator
        /// to resume against, or a server that serves no ranges: `Downloader.resumes`).
        case download(kept: Int64, size: Int64?, resumes: Bool = true)
        /// While uploading, before the server confirmed it. The next run sends it again whole
        /// to an HTTP server; an object store (`resumes`) is asked what it holds, and only the
        /// objects and multipart parts it lacks go.
        case upload(resumes: Bool)
    }
}
