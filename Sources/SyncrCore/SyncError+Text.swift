#if canImport(Glibc)
import Glibc
#endif
import SyncrArchive
import SyncrHTTP
import SyncrManifest

/// The one place a `SyncError` becomes the operator's message: every kind of request, every
/// stage and the CLI's text, JSON and JUnit output give the same words and hints.
extension SyncError {
    /// What went wrong, where, and what to do about it.
    public var description: String {
        switch self {
        case .http, .connection, .timedOut, .stalled, .tls, .proxy, .invalidResponse, .rangeIgnored, .redirect, .transferIO:
            return requestText
        case .noSpace(let path, let needed, let available, let errno, let during):
            return Self.noSpaceText(path: path, needed: needed, available: available, errno: errno, during: during)
        case .readOnly(let path, let during):
            return Self.readOnlyText(path: path, during: during)
        case .file(let error):
            return error.description
        case .copyFailed(let error):
            return "cannot copy the finished file into place: \(error.description)"
        case .folderNotUnpacked(let destination, let holds):
            return "\(destination): a folder syncr did not unpack is there, holding \(holds), which the archive does not; "
                + "unpacking replaces the whole folder, so move it away (or empty it) and run again"
        case .destinationBlocked(let destination, let wantsFolder):
            return wantsFolder
                ? "\(destination): a file stands where the unpacked folder goes; move it away and run again"
                : "\(destination): exists and is not a regular file; move it away and run again"
        case .folderBlocked(let destination, let obstacle):
            return "\(destination): its folder cannot be made: \(obstacle); move it away and run again"
        case .checksumMismatch(let url, let algorithm, let expected, let actual, let destination):
            return "\(url): \(algorithm) mismatch: expected \(expected), got \(actual ?? "?"); "
                + "the download was discarded and \(destination) left as it was "
                + "(if the file changed on purpose, update \(algorithm) in the manifest; "
                + "in a locked run without one there, run 'syncr lock')"
        case .unpack(let url, let destination, let error):
            return "\(url): cannot unpack into \(destination): \(error)" + Self.unpackHint(error, destination: destination)
        case .uploadSource(let path, let problem):
            return Self.sourceText(path: path, problem: problem)
        case .changedWhileSending(let path, let change):
            // Worded beside the transfer error the body's reader fails with, for one wording.
            return TransferError.changedWhileSendingText(path: path, change: change)
        case .lockedVersionChanged(let lockfile, let change):
            return "what the URL serves changed since \(lockfile) was written (\(change)); the destination is left as it is. "
                + "Run 'syncr lock' to accept the new version"
        case .zip(let from, let error):
            return "cannot zip \(from): \(error)"
        case .objectStore(let status, let url, let bucket, let key, let storeCode, let storeMessage, let advice, let r, let proxy):
            return Self.objectStoreText(status: status, url: url, bucket: bucket, key: key, storeCode: storeCode,
                                        storeMessage: storeMessage, advice: advice, proxy: proxy) + Self.stopText(r.stop)
        case .interrupted(let interruption):
            return Self.interruptionText(interruption)
        case .other(let message):
            return message
        }
    }

    /// `URL: HTTP 403 Forbidden, AccessDenied: Access Denied (bucket b, key k); advice`;
    /// through an HTTP proxy, `HTTP 403 Forbidden through the proxy 127.0.0.1:3128 set in
    /// http_proxy`, as for `.http`.
    private static func objectStoreText(status: Int, url: String, bucket: String, key: String, storeCode: String?,
                                        storeMessage: String, advice: String?, proxy: EnvironmentProxy?) -> String {
        let reason = HTTPStatus.reason(status)
        var text = "\(url): HTTP \(status)" + (reason.isEmpty ? "" : " " + reason)
        if let proxy { text += " through the proxy \(proxy.endpoint) set in \(proxy.variable)" }
        if let storeCode { text += ", \(storeCode)" + (storeMessage.isEmpty ? "" : ": \(storeMessage)") }
        text += " (bucket \(bucket), key \(key.isEmpty ? "(none)" : key))"
        // An answer without S3's error (a HEAD's has no body; a proxy's own page is no S3 XML)
        // may be the proxy's refusal: that first, then the store's advice.
        if let proxy, storeCode == nil, status == 401 || status == 403 {
            return text + "; " + proxyRefusalText(proxy) + (advice.map { "; if it is the store's, \($0)" } ?? "")
        }
        return text + (advice.map { "; \($0)" } ?? "")
    }

    /// Why the retries stopped, as the end of a message; empty when that says nothing new.
    private static func stopText(_ stop: Retries.Stop?) -> String {
        switch stop {
        case .exhausted(0)?: return " (not retried: retries is 0)"
        case .exhausted(1)?: return " (gave up after 1 retry)"
        case .exhausted(let count)?: return " (gave up after \(count) retries)"
        case .waitTooLong(let seconds)?: return " (the server asks to wait longer than \(seconds) s)"
        case .serverUnreachable?: return " (stopped: another entry used up its retries on this server, which did not answer)"
        case .unsafeToRepeat?:
            return " (not retried: the POST may have reached the server, and sending it again could act twice; "
                + "set retry: true on the entry if that is safe)"
        case .notRetryable?, nil: return ""
        }
    }

    /// The retry loop's facts, for the cases that come from a request.
    public var retries: Retries? {
        switch self {
        case .http(_, _, _, let r, _, _), .connection(_, _, _, let r), .timedOut(_, _, let r), .stalled(_, _, _, _, _, let r),
             .tls(_, _, let r), .proxy(_, _, _, let r),
             .invalidResponse(_, _, let r), .rangeIgnored(_, let r), .redirect(_, _, let r), .transferIO(_, _, _, let r),
             .objectStore(_, _, _, _, _, _, _, let r, _):
            return r
        default:
            return nil
        }
    }

    /// A failed request: the transfer error's own words, then what to do. After 401 or 403:
    /// check the credentials; after other failures that kept bytes: run again to resume; and
    /// why the retries stopped. A failure that will be retried gets its own words only.
    private var requestText: String {
        guard let retries, let stop = retries.stop else { return requestHead }
        var text = requestHead
        if case .http(let status, _, _, _, _, _) = self, [301, 302, 303, 307, 308].contains(status) {
            // A redirect with a Location is followed; one that reaches here had none.
            text += " (a redirect without a Location to follow: the server's redirect is broken, or the URL is not the file's)"
        } else if case .http(let status, _, _, _, _, _) = self, status == 405 || status == 501 {
            // Mostly an upload to a server that serves files but takes none (a plain web server).
            text += " (the server does not take this request's method at this URL; for an upload with method: put, it "
                + "needs a server that accepts PUT, such as WebDAV or an object store; method: post sends a form)"
        } else if case .http(let status, _, _, _, let proxy, let sent) = self, (400..<500).contains(status), status != 408,
                  status != 429 {
            if status == 401 || status == 403 {
                let advice = Self.credentialsAdvice(status: status, sent: sent)
                // Through a proxy the refusal may be the proxy's own: that first, then the server's.
                text += proxy.map { " (\(Self.proxyRefusalText($0)); if it is the server's, \(advice))" } ?? " (\(advice))"
            } else if status == 413 {
                text += " (the server takes no request body this large: raise its limit, such as nginx's "
                    + "client_max_body_size, or send a smaller file)"
            }
        } else if case .proxy = self {
            text += " (not retried: this will not change until the proxy or its setting does)"
        } else if retries.kept > 0 {
            text += Self.keptText(retries)
        }
        return text + Self.stopText(stop)
    }

    /// A refusal (401, 403) of a plain-http request that went through an HTTP proxy: the
    /// proxy may have given it, for its own rules, and nothing in the answer tells whose it is.
    private static func proxyRefusalText(_ proxy: EnvironmentProxy) -> String {
        "the refusal may be the proxy's, \(proxy.endpoint) set in \(proxy.variable): if so, ask whoever runs it to "
            + "allow this server, or list the server's host in no_proxy to connect to it directly"
    }

    /// What failed, before what to do: the transfer error's own words; a stall's in the
    /// manifest's terms, since the entry's `timeout:` (and `low_speed:`) decided it.
    private var requestHead: String {
        guard case .stalled(let url, let milliseconds, let lowSpeed, let phase, let origin, _) = self else {
            return transferError?.description ?? ""
        }
        let speed = lowSpeed.map { ByteSize.format(Int64($0)) }
        let setting = Self.timeoutText(milliseconds: milliseconds, origin: origin)
        let limits = speed.map { "low_speed: \($0), \(setting)" } ?? setting
        let time = TransferError.secondsText(milliseconds)
        switch phase {
        case .receiving:
            return "\(TransferError.stallText(milliseconds: milliseconds, lowSpeed: speed)) (\(limits)) from \(url)"
        case .sending(let path):
            return "the server took no data for \(time) (\(limits)) while sending \(path) to \(url)"
        case .awaitingAnswer(let path):
            return "no answer for \(time) (\(limits)) after sending \(path) to \(url)"
        }
    }

    /// `timeout: 10s in the manifest`, `timeout: 30s, the default`: the setting and where to
    /// change it. Only a manifest that wrote `timeout:` is named (a value other than the
    /// default may come from a program's own settings); syncr has no flag that sets it.
    private static func timeoutText(milliseconds: Int, origin: TimeoutOrigin) -> String {
        let timeout = "timeout: \(DurationText.format(milliseconds: milliseconds))"
        switch origin {
        case .configured: return timeout + " in the manifest"
        case .builtIn: return timeout + ", the default"
        case .unstated: return timeout
        }
    }

    /// What the bytes that arrived are worth to the next run: a resume, or nothing where the
    /// server named no version of the file to resume against, or serves no ranges (the next
    /// plan restarts it).
    private static func keptText(_ retries: Retries) -> String {
        let kept = ByteSize.format(retries.kept)
        guard retries.resumes else {
            return "; the \(kept) received cannot be resumed, since \(noResume): the next run starts over"
        }
        return "; \(kept) kept in the cache, run again to resume"
    }

    /// Why kept bytes will not be resumed (`Downloader.resumes`): either reason makes the next
    /// plan restart the file.
    private static let noResume = "the server names no version of the file (no strong ETag or Last-Modified) "
        + "or serves no byte ranges"

    private static func noSpaceText(path: String, needed: Int64?, available: Int64?, errno: Int32,
                                    during: DiskStep) -> String {
        let reason = String(cString: strerror(errno))
        switch during {
        case .reserve(let entry):
            return "not enough space in \(path) for \(entry): need \(ByteSize.format(needed ?? 0)), "
                + "\(available.map(ByteSize.format) ?? "unknown") free; free space and run again"
        case .cacheWrite(let kept):
            let free = available.map { ", \(ByteSize.format($0)) free" } ?? ""
            let next = kept > 0 ? "\(ByteSize.format(kept)) downloaded so far is kept, free some space and run again to resume"
                : "nothing could be kept, free some space and run again"
            return "cannot write to the cache in \(path): \(reason)\(free); \(next)"
        case .unpack:
            return unpackRoomText(path: path, reason: reason)
        case .copy(let entry):
            let free = available.map { " (\(ByteSize.format($0)) free)" } ?? ""
            return "cannot copy the finished file into \(path): \(reason)\(free); "
                + "the download is complete in the cache and \(entry) was left as it was: free some space and run again"
        }
    }

    private static func readOnlyText(path: String, during: DiskStep) -> String {
        let reason = String(cString: strerror(EROFS))
        switch during {
        case .reserve, .cacheWrite:
            return "cannot write to the cache in \(path): \(reason); make it writable (or pass --cache) and run again"
        case .unpack:
            return unpackRoomText(path: path, reason: reason)
        case .copy:
            return "cannot write into \(path): \(reason); "
                + "the download is complete in the cache: make the destination writable and run again"
        }
    }

    private static func unpackRoomText(path: String, reason: String) -> String {
        "cannot unpack into \(path): \(reason); "
            + "the archive is complete in the cache: make room (or make the folder writable) and run again"
    }

    /// Raising `max_unpacked_size` or making room must not cost another download: the archive
    /// is kept complete in the cache, and the message says so.
    private static func unpackHint(_ error: ArchiveError, destination: String) -> String {
        switch error {
        case .io(_, let code, _) where code == ENOSPC || code == EDQUOT || code == EROFS:
            return "; the archive is complete in the cache and \(destination) was left as it was: "
                + "make room (or make the folder writable) and run again"
        case .limit, .stripped, .duplicate(_, _, _, _, .some):
            return "; the archive is complete in the cache and \(destination) was left as it was"
        default:
            return ""
        }
    }

    private static func sourceText(path: String, problem: SourceProblem) -> String {
        switch problem {
        case .missing: return "from: \(path): no such file or folder"
        case .unreadable(let code): return "from: \(path): cannot read: \(String(cString: strerror(code)))"
        case .notAFileOrFolder: return "from: \(path): not a regular file or folder"
        case .emptyFolder: return "from: \(path) is an empty folder: nothing to send"
        case .zipNeedsFolder: return "zip: true needs a folder in from:, and \(path) is a file"
        case .namesDifferOnlyInNormalization(let a, let b):
            let bytes = { (name: String) in name.utf8.map { String($0, radix: 16) }.joined(separator: " ") }
            return "from: \(path) holds two names that differ only in their Unicode normalization, "
                + "\(a) (bytes \(bytes(a))) and \(b) (bytes \(bytes(b))); rename one: syncr cannot tell them apart in its record of what was sent"
        case .nameNotUTF8(let name):
            return "from: \(path) holds a name that is not UTF-8, \(name); rename it: such a name cannot be sent in a URL"
        }
    }

    private static func interruptionText(_ interruption: Interruption) -> String {
        switch interruption {
        case .beforeStart:
            return "interrupted before it started"
        case .whileAsking:
            return "interrupted while asking the server"
        case .download(let kept, let size, let resumes):
            guard kept > 0 else { return "interrupted before any bytes were kept" }
            let of = size.map { " of \(ByteSize.format($0))" } ?? ""
            guard resumes else {
                return "interrupted after \(ByteSize.format(kept))\(of), which cannot be resumed, since \(Self.noResume): "
                    + "the next run starts over"
            }
            return "interrupted with \(ByteSize.format(kept))\(of) kept in the cache; run the same command again to resume"
        case .upload(let resumes):
            return resumes ? "interrupted before the store confirmed it; the next run sends what the store lacks"
                : "interrupted before the server confirmed it; the next run sends it again whole"
        }
    }
}
