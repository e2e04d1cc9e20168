extension SyncError {
    /// The case as a stable snake_case word, for machine-readable output (the `error_code` of
    /// the JSON report, the `type` of a JUnit failure): `http`, `connection`, `timed_out`, `tls`,
    /// `proxy`, `invalid_response`, `range_ignored`, `redirect`, `transfer_io`, `no_space`, `read_only`,
    /// `file`, `copy_failed`, `destination_blocked`, `checksum_mismatch`, `unpack`,
    /// `upload_source`, `changed_while_sending`, `locked_version_changed`, `zip`, `object_store`,
    /// `interrupted`, `other`. A code, once
    /// given, is never changed: scripts match on it.
    public var code: String {
        switch self {
        case .http: return "http"
        case .connection: return "connection"
        // A stall is the timeout it always was to scripts: the code stays.
        case .timedOut, .stalled: return "timed_out"
        case .tls: return "tls"
        case .proxy: return "proxy"
        case .invalidResponse: return "invalid_response"
        case .rangeIgnored: return "range_ignored"
        case .redirect: return "redirect"
        case .transferIO: return "transfer_io"
        case .noSpace: return "no_space"
        case .readOnly: return "read_only"
        case .file: return "file"
        case .copyFailed: return "copy_failed"
        case .destinationBlocked, .folderBlocked, .folderNotUnpacked: return "destination_blocked"
        case .checksumMismatch: return "checksum_mismatch"
        case .unpack: return "unpack"
        case .uploadSource: return "upload_source"
        case .changedWhileSending: return "changed_while_sending"
        case .lockedVersionChanged: return "locked_version_changed"
        case .zip: return "zip"
        case .objectStore: return "object_store"
        case .interrupted: return "interrupted"
        case .other: return "other"
        }
    }

    /// The HTTP status of an `.http` or `.objectStore` error, and of a `.proxy` error that was
    /// the proxy's answer (407, or its answer to the CONNECT); nil for every other case.
    public var httpStatus: Int? {
        switch self {
        case .http(let status, _, _, _, _, _), .objectStore(let status, _, _, _, _, _, _, _, _): return status
        case .proxy(_, let status, _, _): return status
        default: return nil
        }
    }
}
