#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP
import SyncrS3

extension SyncError {
    /// The failure of a request, with how its retry loop ended.
    init(_ error: TransferError, retries: Retries) {
        switch error {
        case .connection(let url, let code, let message, _):
            self = .connection(url: url, code: code, message: message, retries: retries)
        case .timedOut(let url, let message):
            self = .timedOut(url: url, message: message, retries: retries)
        case .stalled(let url, let milliseconds, let lowSpeed, let phase, let origin):
            self = .stalled(url: url, milliseconds: milliseconds, lowSpeed: lowSpeed, phase: phase, origin: origin,
                            retries: retries)
        case .tls(let url, let message):
            self = .tls(url: url, message: message, retries: retries)
        case .proxy(let url, let status, let message):
            self = .proxy(url: url, status: status, message: message, retries: retries)
        case .status(let url, let code, _, let body, let proxy, _):
            self = .http(status: code, url: url, body: body, retries: retries, proxy: proxy)
        case .rangeNotHonoured(let url):
            self = .rangeIgnored(url: url, retries: retries)
        case .invalidResponse(let url, let message):
            self = .invalidResponse(url: url, message: message, retries: retries)
        case .local(let path, let errno, let message):
            self = .transferIO(path: path, errno: errno, message: message, retries: retries)
        case .unreadableNetrc(_, let file, _):
            // Worded where the file can be read again to say where and why (`Retrying`).
            self = .transferIO(path: file ?? "~/.netrc", errno: EINVAL, message: TransferError.unreadableNetrcText(error),
                               retries: retries)
        case .changedWhileSending(let path, let change):
            // Never retried: the same error, worded once, as the check after the upload gives.
            self = .changedWhileSending(path: path, change: change)
        case .redirect(let url, let message):
            self = .redirect(url: url, message: message, retries: retries)
        case .cancelled:
            self = .other(message: error.description)
        }
    }

    /// The failure of a request to an object store (`s3`: its object; nil for any other URL):
    /// an error answer is worded with S3's code, the bucket and key; anything else as for HTTP.
    init(_ error: TransferError, retries: Retries, s3: S3Object?) {
        guard let s3, case .status(let url, let code, _, let body, let proxy, _) = error else {
            self.init(error, retries: retries)
            return
        }
        let location = s3.location
        let credentials = s3.configuration.credentials
        if let answer = S3ErrorResponse(parsing: body) {
            self = .objectStore(status: code, url: url, bucket: location.bucket, key: location.key,
                                storeCode: answer.code, storeMessage: answer.message,
                                advice: answer.advice(credentials: credentials), retries: retries, proxy: proxy)
        } else {
            // A HEAD answer carries no body, so only the status tells.
            let advice = code == 403 ? S3ErrorResponse(code: "AccessDenied").advice(credentials: credentials)
                : code == 404 ? "no such bucket or key" : nil
            self = .objectStore(status: code, url: url, bucket: location.bucket, key: location.key, storeCode: nil,
                                storeMessage: "", advice: advice, retries: retries, proxy: proxy)
        }
    }

    /// The transfer error a request case stands for, whose description starts its message.
    var transferError: TransferError? {
        switch self {
        case .http(let status, let url, let body, _, let proxy, _):
            return .status(url: url, code: status, retryAfter: nil, body: body, proxy: proxy)
        case .connection(let url, let code, let message, _): return .connection(url: url, code: code, message: message)
        case .timedOut(let url, let message, _): return .timedOut(url: url, message: message)
        case .stalled(let url, let milliseconds, let lowSpeed, let phase, let origin, _):
            return .stalled(url: url, milliseconds: milliseconds, lowSpeed: lowSpeed, phase: phase, origin: origin)
        case .tls(let url, let message, _): return .tls(url: url, message: message)
        case .proxy(let url, let status, let message, _): return .proxy(url: url, status: status, message: message)
        case .invalidResponse(let url, let message, _): return .invalidResponse(url: url, message: message)
        case .rangeIgnored(let url, _): return .rangeNotHonoured(url: url)
        case .redirect(let url, let message, _): return .redirect(url: url, message: message)
        case .transferIO(let path, let errno, let message, _): return .local(path: path, errno: errno, message: message)
        default: return nil
        }
    }

    /// This error with its retry loop's facts changed by `change`; a case without them as it is.
    func changingRetries(_ change: (inout Retries) -> Void) -> SyncError {
        guard var r = retries else { return self }
        change(&r)
        switch self {
        case .http(let status, let url, let body, _, let proxy, let sent):
            return .http(status: status, url: url, body: body, retries: r, proxy: proxy, sent: sent)
        case .connection(let url, let code, let message, _): return .connection(url: url, code: code, message: message, retries: r)
        case .timedOut(let url, let message, _): return .timedOut(url: url, message: message, retries: r)
        case .stalled(let url, let milliseconds, let lowSpeed, let phase, let origin, _):
            return .stalled(url: url, milliseconds: milliseconds, lowSpeed: lowSpeed, phase: phase, origin: origin, retries: r)
        case .tls(let url, let message, _): return .tls(url: url, message: message, retries: r)
        case .proxy(let url, let status, let message, _): return .proxy(url: url, status: status, message: message, retries: r)
        case .invalidResponse(let url, let message, _): return .invalidResponse(url: url, message: message, retries: r)
        case .rangeIgnored(let url, _): return .rangeIgnored(url: url, retries: r)
        case .redirect(let url, let message, _): return .redirect(url: url, message: message, retries: r)
        case .transferIO(let path, let errno, let message, _):
            return .transferIO(path: path, errno: errno, message: message, retries: r)
        case .objectStore(let status, let url, let bucket, let key, let storeCode, let storeMessage, let advice, _, let proxy):
            return .objectStore(status: status, url: url, bucket: bucket, key: key, storeCode: storeCode,
                                storeMessage: storeMessage, advice: advice, retries: r, proxy: proxy)
        default: return self
        }
    }

    /// This error with every text in it masked by `redactor`, so that a library caller who
    /// reads the values sees no more than the CLI prints.
    func scrubbed(_ redactor: Redactor) -> SyncError {
        let s = redactor.scrub
        switch self {
        case .http(let status, let url, let body, let r, let proxy, let sent):
            return .http(status: status, url: s(url), body: s(body), retries: r, proxy: proxy, sent: sent?.scrubbed(redactor))
        case .connection(let url, let code, let message, let r):
            return .connection(url: s(url), code: code, message: s(message), retries: r)
        case .timedOut(let url, let message, let r): return .timedOut(url: s(url), message: s(message), retries: r)
        case .stalled(let url, let milliseconds, let lowSpeed, let phase, let origin, let r):
            return .stalled(url: s(url), milliseconds: milliseconds, lowSpeed: lowSpeed, phase: phase.scrubbed(redactor),
                            origin: origin, retries: r)
        case .tls(let url, let message, let r): return .tls(url: s(url), message: s(message), retries: r)
        case .proxy(let url, let status, let message, let r):
            return .proxy(url: s(url), status: status, message: s(message), retries: r)
        case .invalidResponse(let url, let message, let r):
            return .invalidResponse(url: s(url), message: s(message), retries: r)
        case .rangeIgnored(let url, let r): return .rangeIgnored(url: s(url), retries: r)
        case .redirect(let url, let message, let r): return .redirect(url: s(url), message: s(message), retries: r)
        case .transferIO(let path, let errno, let message, let r):
            return .transferIO(path: s(path), errno: errno, message: s(message), retries: r)
        case .noSpace(let path, let needed, let available, let errno, let during):
            return .noSpace(path: s(path), needed: needed, available: available, errno: errno, during: during.scrubbed(redactor))
        case .readOnly(let path, let during): return .readOnly(path: s(path), during: during.scrubbed(redactor))
        case .file(let error): return .file(error.scrubbed(redactor))
        case .copyFailed(let error): return .copyFailed(error.scrubbed(redactor))
        case .destinationBlocked(let destination, let wantsFolder):
            return .destinationBlocked(destination: s(destination), wantsFolder: wantsFolder)
        case .folderBlocked(let destination, let obstacle):
            return .folderBlocked(destination: s(destination), obstacle: s(obstacle))
        case .folderNotUnpacked(let destination, let holds):
            return .folderNotUnpacked(destination: s(destination), holds: s(holds))
        case .checksumMismatch(let url, let algorithm, let expected, let actual, let destination):
            return .checksumMismatch(url: s(url), algorithm: algorithm, expected: expected, actual: actual,
                                     destination: s(destination))
        case .unpack(let url, let destination, let error): return .unpack(url: s(url), destination: s(destination), error: error)
        case .uploadSource(let path, let problem): return .uploadSource(path: s(path), problem: problem)
        case .changedWhileSending(let path, let change): return .changedWhileSending(path: s(path), change: change.map(s))
        case .lockedVersionChanged(let lockfile, let change): return .lockedVersionChanged(lockfile: lockfile, change: s(change))
        case .zip(let from, let error): return .zip(from: s(from), error: error)
        case .interrupted: return self
        case .other(let message): return .other(message: s(message))
        case .objectStore(let status, let url, let bucket, let key, let storeCode, let storeMessage, let advice, let r, let proxy):
            return .objectStore(status: status, url: s(url), bucket: bucket, key: s(key), storeCode: storeCode,
                                storeMessage: s(storeMessage), advice: advice.map(s), retries: r, proxy: proxy)
        }
    }
}

extension SyncError.DiskStep {
    func scrubbed(_ redactor: Redactor) -> Self {
        switch self {
        case .reserve(let entry): return .reserve(entry: redactor.scrub(entry))
        case .copy(let entry): return .copy(entry: redactor.scrub(entry))
        case .cacheWrite, .unpack: return self
        }
    }
}

extension FileError {
    func scrubbed(_ redactor: Redactor) -> FileError {
        FileError(path: redactor.scrub(path), operation: operation, errno: errno)
    }
}

extension ItemResult.Outcome {
    /// This outcome with the texts of its error masked.
    func scrubbed(_ redactor: Redactor) -> Self {
        guard case .failed(let error) = self else { return self }
        return .failed(error.scrubbed(redactor))
    }
}

extension SyncError {
    /// No room to preallocate the cache file: nothing was fetched, and what the attempt took on
    /// disk is given back.
    var isNoRoomToReserve: Bool {
        if case .noSpace(_, _, _, _, .reserve) = self { return true }
        return false
    }
}

extension SyncError {
    /// Any error thrown on an entry's way, as the entry's error: a `SyncError` as it is, the
    /// errors of local files and requests in their cases, anything else as its own text.
    init(_ error: any Error) {
        switch error {
        case let error as SyncError: self = error
        case let error as FileError: self = .file(error)
        case let error as TransferError: self = SyncError(error, retries: .notRetried)
        // Blocking work (a hash, a zip) stopped by a signal before the entry's transfer began.
        case is Interrupted: self = .interrupted(.beforeStart)
        default: self = .other(message: "\(error)")
        }
    }
}

extension StallPhase {
    /// The phase with its file's path masked (a path may hold an expanded secret).
    func scrubbed(_ redactor: Redactor) -> StallPhase {
        switch self {
        case .receiving: return self
        case .sending(let path): return .sending(path: redactor.scrub(path))
        case .awaitingAnswer(let path): return .awaitingAnswer(path: redactor.scrub(path))
        }
    }
}
