#if canImport(Glibc)
import Glibc
#endif
import SyncrArchive
import SyncrCore
import SyncrHTTP
import Testing

/// `SyncError`'s messages, worded in one place: each case gives the text the CLI has always
/// printed for that failure (golden text), and each case has a code of its own.
@Suite(.timeLimit(.minutes(10)))
struct SyncErrorTextTests {
    static let url = "https://files.example/f.bin"

    /// One error per case, with the message it must give.
    static let golden: [(SyncError, String)] = [
        (.http(status: 404, url: url, body: "", retries: .notRetried),
         "\(url): HTTP 404 Not Found"),
        (.http(status: 401, url: url, body: "", retries: .notRetried),
         "\(url): HTTP 401 Unauthorized (check the credentials: the entry's headers:, a user:password in its URL, or netrc: true)"),
        (.http(status: 503, url: url, body: "busy", retries: .init(stop: .exhausted(retries: 3), kept: 1 << 20)),
         "\(url): HTTP 503 Service Unavailable (server said: busy); 1.0 MiB kept in the cache, run again to resume "
            + "(gave up after 3 retries)"),
        (.http(status: 429, url: url, body: "", retries: .init(stop: .waitTooLong(seconds: 300), kept: 0)),
         "\(url): HTTP 429 Too Many Requests (the server asks to wait longer than 300 s)"),
        (.connection(url: url, code: 7, message: "refused", retries: .init(stop: .exhausted(retries: 2), kept: 0)),
         "\(url): connection failed: refused (gave up after 2 retries)"),
        (.timedOut(url: url, message: "no data for 30 s", retries: .init(stop: .exhausted(retries: 0), kept: 4096)),
         "\(url): timed out: no data for 30 s; 4.0 KiB kept in the cache, run again to resume (not retried: retries is 0)"),
        (.stalled(url: url, milliseconds: 10_000, lowSpeed: nil, origin: .configured,
                  retries: .init(stop: .exhausted(retries: 2), kept: 1 << 20)),
         "no data for 10 s (timeout: 10s in the manifest) from \(url); 1.0 MiB kept in the cache, run again to resume "
            + "(gave up after 2 retries)"),
        (.tls(url: url, message: "cannot verify the certificate", retries: .notRetried),
         "\(url): TLS error: cannot verify the certificate"),
        (.proxy(url: url, status: 407, message: "CONNECT tunnel failed, response 407; p:3128 is the proxy set in https_proxy",
                retries: .notRetried),
         "\(url): CONNECT tunnel failed, response 407; p:3128 is the proxy set in https_proxy "
            + "(not retried: this will not change until the proxy or its setting does)"),
        (.invalidResponse(url: url, message: "Content-Range 0-9/10 for bytes=5-", retries: .notRetried),
         "\(url): invalid response: Content-Range 0-9/10 for bytes=5-"),
        (.rangeIgnored(url: url, retries: .notRetried),
         "\(url): the server ignored the Range request and sent the whole file"),
        (.redirect(url: url, message: "too many redirects", retries: .notRetried),
         "\(url): too many redirects"),
        (.transferIO(path: "/c/x.data", errno: EIO, message: "write failed", retries: .notRetried),
         "/c/x.data: write failed"),
        (.noSpace(path: "/c", needed: 1 << 30, available: 512 << 20, errno: ENOSPC, during: .reserve(entry: "out/big.bin")),
         "not enough space in /c for out/big.bin: need 1.0 GiB, 512.0 MiB free; free space and run again"),
        (.readOnly(path: "/c", during: .cacheWrite(kept: 10)),
         "cannot write to the cache in /c: Read-only file system; make it writable (or pass --cache) and run again"),
        (.file(FileError(path: "out/f.bin", operation: "move the finished file into place", errno: EACCES)),
         "out/f.bin: cannot move the finished file into place: Permission denied (check the permissions of the folder)"),
        (.copyFailed(FileError(path: "out/.syncr-k.tmp", operation: "write", errno: EIO)),
         "cannot copy the finished file into place: out/.syncr-k.tmp: cannot write: Input/output error"),
        (.lockedVersionChanged(lockfile: "syncr.lock", change: "size 1000 → 1001 bytes"),
         "what the URL serves changed since syncr.lock was written (size 1000 → 1001 bytes); the destination is left as it is. "
            + "Run 'syncr lock' to accept the new version"),
        (.destinationBlocked(destination: "out/f.bin", wantsFolder: false),
         "out/f.bin: exists and is not a regular file; move it away and run again"),
        (.checksumMismatch(url: url, algorithm: "sha256", expected: "ab12", actual: "cd34", destination: "out/f.bin"),
         "\(url): sha256 mismatch: expected ab12, got cd34; the download was discarded and out/f.bin left as it was "
            + "(if the file changed on purpose, update sha256 in the manifest; in a locked run without one there, run 'syncr lock')"),
        (.unpack(url: url, destination: "out/tree", error: .limit(archive: "f.zip", entry: nil, detail: "over 1.0 GiB")),
         "\(url): cannot unpack into out/tree: f.zip: stopped: over 1.0 GiB; the archive is complete in the cache "
            + "and out/tree was left as it was"),
        (.uploadSource(path: "dist", problem: .emptyFolder),
         "from: dist is an empty folder: nothing to send"),
        (.changedWhileSending(path: "/p/dist/a.txt"),
         "/p/dist/a.txt: changed while it was being uploaded; it was not recorded as sent: "
            + "run again once nothing writes to it, to send the new version"),
        (.zip(from: "dist", error: .io(path: "dist/a", errno: EACCES, detail: "cannot open")),
         "cannot zip dist: dist/a: cannot open"),
        (.interrupted(.download(kept: 1 << 20, size: 4 << 20)),
         "interrupted with 1.0 MiB of 4.0 MiB kept in the cache; run the same command again to resume"),
        (.objectStore(status: 403, url: "s3://art/app.tgz", bucket: "art", key: "app.tgz", storeCode: "AccessDenied",
                      storeMessage: "Access Denied", advice: "check the credentials from AWS_ACCESS_KEY_ID",
                      retries: .init(stop: .notRetryable, kept: 0)),
         "s3://art/app.tgz: HTTP 403 Forbidden, AccessDenied: Access Denied (bucket art, key app.tgz); "
            + "check the credentials from AWS_ACCESS_KEY_ID"),
        (.other(message: "an upload item reached the downloader"),
         "an upload item reached the downloader"),
    ]

    @Test(arguments: golden.indices)
    func eachCaseGivesItsMessage(index: Int) {
        let (error, text) = Self.golden[index]
        #expect(error.description == text)
    }

    /// The variants within a case that choose other words.
    @Test func variantsOfOneCase() {
        let kept = SyncError.Retries(stop: nil, kept: 1 << 20)
        #expect(SyncError.connection(url: Self.url, code: 7, message: "refused", retries: kept).description
                == "\(Self.url): connection failed: refused", "an attempt that will be retried: its own words only")
        #expect(SyncError.noSpace(path: "/c", needed: nil, available: 2048, errno: ENOSPC, during: .cacheWrite(kept: 0))
                .description == "cannot write to the cache in /c: No space left on device, 2.0 KiB free; nothing could be kept, "
                + "free some space and run again")
        #expect(SyncError.noSpace(path: "/d", needed: nil, available: nil, errno: EDQUOT, during: .copy(entry: "out/f"))
                .description == "cannot copy the finished file into /d: Disk quota exceeded; the download is complete "
                + "in the cache and out/f was left as it was: free some space and run again")
        #expect(SyncError.readOnly(path: "/d", during: .copy(entry: "out/f")).description
                == "cannot write into /d: Read-only file system; the download is complete in the cache: "
                + "make the destination writable and run again")
        #expect(SyncError.readOnly(path: "/d", during: .unpack).description
                == "cannot unpack into /d: Read-only file system; the archive is complete in the cache: "
                + "make room (or make the folder writable) and run again")
        #expect(SyncError.destinationBlocked(destination: "out/tree", wantsFolder: true).description
                == "out/tree: a file stands where the unpacked folder goes; move it away and run again")
        #expect(SyncError.uploadSource(path: "zipme.txt", problem: .zipNeedsFolder).description
                == "zip: true needs a folder in from:, and zipme.txt is a file")
        #expect(SyncError.uploadSource(path: "dist/x", problem: .unreadable(errno: EACCES)).description
                == "from: dist/x: cannot read: Permission denied")
        #expect(SyncError.interrupted(.download(kept: 0, size: nil)).description == "interrupted before any bytes were kept")
        #expect(SyncError.interrupted(.download(kept: 1 << 20, size: 4 << 20, resumes: false)).description
                == "interrupted after 1.0 MiB of 4.0 MiB, which cannot be resumed, since the server names no version of the "
                + "file (no strong ETag or Last-Modified) or serves no byte ranges: the next run starts over")
        #expect(SyncError.interrupted(.beforeStart).description == "interrupted before it started")
        #expect(SyncError.interrupted(.whileAsking).description == "interrupted while asking the server")
        #expect(SyncError.interrupted(.upload(resumes: false)).description
                == "interrupted before the server confirmed it; the next run sends it again whole")
        #expect(SyncError.interrupted(.upload(resumes: true)).description
                == "interrupted before the store confirmed it; the next run sends what the store lacks")
    }

    /// A stall is said in the manifest's terms (`timeout:`, and `low_speed:` when bytes still
    /// came), never in curl's ("Operation too slow. Less than 1024 bytes/sec transferred ...").
    @Test func aStallNamesTheSettingsThatDecidedIt() {
        let slow = SyncError.stalled(url: Self.url, milliseconds: 30_000, lowSpeed: 1024, origin: .builtIn,
                                     retries: .init(stop: .exhausted(retries: 0), kept: 0))
        #expect(slow.description == "less than 1.0 KiB/s for 30 s (low_speed: 1.0 KiB, timeout: 30s, the default) from "
                + "\(Self.url) (not retried: retries is 0)", "\(slow.description)")
        let retried = SyncError.stalled(url: Self.url, milliseconds: 1500, lowSpeed: nil, origin: .configured, retries: .willRetry)
        #expect(retried.description == "no data for 1.5 s (timeout: 1s500ms in the manifest) from \(Self.url)")
        #expect(slow.code == "timed_out")
    }

    /// "in the manifest" only where the manifest wrote `timeout:` (30 s written is the
    /// manifest's too); a value a program set itself is said without a place, and the default
    /// as the default. It was "in the manifest" for any value but 30 s.
    @Test func aStallSaysWhereItsTimeoutCameFrom() {
        let stall = { (milliseconds: Int, origin: TimeoutOrigin) in
            SyncError.stalled(url: Self.url, milliseconds: milliseconds, lowSpeed: nil, origin: origin, retries: .willRetry).description
        }
        #expect(stall(30_000, .configured) == "no data for 30 s (timeout: 30s in the manifest) from \(Self.url)")
        #expect(stall(30_000, .builtIn) == "no data for 30 s (timeout: 30s, the default) from \(Self.url)")
        #expect(stall(10_000, .unstated) == "no data for 10 s (timeout: 10s) from \(Self.url)")
    }

    /// An upload's stall is said as what stopped: the server took no more of the body, or
    /// gave no answer once it had it all. curl said "Operation too slow. Less than 1 bytes/sec
    /// transferred the last 30 seconds" of both.
    @Test func anUploadStallSaysWhetherTheBodyOrTheAnswerStopped() {
        let sending = SyncError.stalled(url: Self.url, milliseconds: 10_000, lowSpeed: nil, phase: .sending(path: "/p/app.tar"),
                                        origin: .configured, retries: .init(stop: .exhausted(retries: 0), kept: 0))
        #expect(sending.description == "the server took no data for 10 s (timeout: 10s in the manifest) while sending "
                + "/p/app.tar to \(Self.url) (not retried: retries is 0)", "\(sending.description)")
        let answer = SyncError.stalled(url: Self.url, milliseconds: 30_000, lowSpeed: nil, phase: .awaitingAnswer(path: "/p/app.tar"),
                                       origin: .builtIn, retries: .willRetry)
        #expect(answer.description == "no answer for 30 s (timeout: 30s, the default) after sending /p/app.tar to \(Self.url)")
        #expect(sending.code == "timed_out" && answer.code == "timed_out")
    }

    /// Bytes kept from a server that names no version of its file are no resume: the next plan
    /// restarts the entry, and the message says so rather than "run again to resume".
    @Test func keptBytesThatCannotBeResumedAreSaidSo() {
        let error = SyncError.stalled(url: Self.url, milliseconds: 10_000, lowSpeed: nil, origin: .configured,
                                      retries: .init(stop: .exhausted(retries: 1), kept: 1 << 20, resumes: false))
        #expect(error.description == "no data for 10 s (timeout: 10s in the manifest) from \(Self.url); the 1.0 MiB "
                + "received cannot be resumed, since the server names no version of the file (no strong ETag or "
                + "Last-Modified) or serves no byte ranges: the next run starts over (gave up after 1 retry)", "\(error.description)")
    }

    /// A plain web server answers a PUT with 501 (or 405): said what it means, and that it is not
    /// retried (another attempt gets the same answer).
    @Test(arguments: [405, 501])
    func aMethodTheServerDoesNotTakeIsExplained(status: Int) {
        let text = SyncError.http(status: status, url: Self.url, body: "", retries: .notRetried).description
        #expect(text.hasSuffix(" (the server does not take this request's method at this URL; for an upload with method: put, "
                               + "it needs a server that accepts PUT, such as WebDAV or an object store; method: post sends a form)"),
                "\(text)")
    }

    /// A refusal of a plain-http request that an HTTP proxy forwarded may be the proxy's: the
    /// message names the proxy and its variable (from the error's value), and says what to do
    /// for either. Another status only names the proxy it came through.
    @Test func aRefusalThroughAProxyNamesIt() {
        let url = "http://files.example/f.bin"
        let proxy = EnvironmentProxy(variable: "http_proxy", host: "127.0.0.1", port: 3128)
        let refused = SyncError.http(status: 403, url: url, body: "Access denied", retries: .notRetried, proxy: proxy)
        #expect(refused.description == "\(url): HTTP 403 Forbidden through the proxy 127.0.0.1:3128 set in http_proxy "
                + "(the proxy or the server said: Access denied) (the refusal may be the proxy's, 127.0.0.1:3128 set in "
                + "http_proxy: if so, ask whoever runs it to allow this server, or list the server's host in no_proxy to "
                + "connect to it directly; if it is the server's, check the credentials: the entry's headers:, a "
                + "user:password in its URL, or netrc: true)", "\(refused.description)")
        let v6 = EnvironmentProxy(variable: "HTTP_PROXY", host: "::1", port: 8080)
        let missing = SyncError.http(status: 404, url: url, body: "", retries: .notRetried, proxy: v6)
        #expect(missing.description == "\(url): HTTP 404 Not Found through the proxy [::1]:8080 set in HTTP_PROXY")
        #expect(refused.code == "http" && refused.httpStatus == 403)
    }

    /// An object store's refusal through an HTTP proxy names the proxy as `.http` does; one
    /// without S3's error in it (a HEAD, or the proxy's own page) may be the proxy's, which is
    /// said first. S3's error in the answer is the store's: then only its advice.
    @Test func anObjectStoresRefusalThroughAProxyNamesIt() {
        let proxy = EnvironmentProxy(variable: "http_proxy", host: "127.0.0.1", port: 3128)
        let bare = SyncError.objectStore(status: 403, url: "s3://art/app.tgz", bucket: "art", key: "app.tgz", storeCode: nil,
                                         storeMessage: "", advice: "the credentials used: AWS_ACCESS_KEY_ID; check them",
                                         retries: .notRetried, proxy: proxy)
        #expect(bare.description == "s3://art/app.tgz: HTTP 403 Forbidden through the proxy 127.0.0.1:3128 set in http_proxy "
                + "(bucket art, key app.tgz); the refusal may be the proxy's, 127.0.0.1:3128 set in http_proxy: if so, ask "
                + "whoever runs it to allow this server, or list the server's host in no_proxy to connect to it directly; "
                + "if it is the store's, the credentials used: AWS_ACCESS_KEY_ID; check them", "\(bare.description)")
        let stores = SyncError.objectStore(status: 403, url: "s3://art/app.tgz", bucket: "art", key: "app.tgz",
                                           storeCode: "AccessDenied", storeMessage: "Access Denied", advice: "check them",
                                           retries: .notRetried, proxy: proxy)
        #expect(stores.description == "s3://art/app.tgz: HTTP 403 Forbidden through the proxy 127.0.0.1:3128 set in "
                + "http_proxy, AccessDenied: Access Denied (bucket art, key app.tgz); check them", "\(stores.description)")
        #expect(bare.code == "object_store" && bare.httpStatus == 403)
    }

    /// A redirect status reaches the entry's error only without a Location (one with it is
    /// followed): said, not a bare "HTTP 302 Found".
    @Test func aRedirectWithoutALocationIsExplained() {
        let text = SyncError.http(status: 302, url: Self.url, body: "", retries: .notRetried).description
        #expect(text == "\(Self.url): HTTP 302 Found (a redirect without a Location to follow: the server's redirect is broken, "
                + "or the URL is not the file's)", "\(text)")
    }

    /// Two names that strip_components made one: lowering it needs no download, as raising
    /// max_unpacked_size does not, and the message says so.
    @Test func aCollisionThatStrippingMadeSaysTheArchiveIsKept() {
        let error = ArchiveError.duplicate(archive: "t.zip", entry: "v2/a", first: "v1/a", name: "a", strippedBy: "strip_components")
        let text = SyncError.unpack(url: "https://example.com/t.zip", destination: "out/tree", error: error).description
        #expect(text == "https://example.com/t.zip: cannot unpack into out/tree: t.zip: v1/a and v2/a both unpack to a once "
            + "strip_components has removed their leading folders; lower strip_components (unpacking the archive once "
            + "without it shows the layout); the archive is complete in the cache and out/tree was left as it was")
    }

    /// The body's reader knows how the file changed, and says it in the same words as the
    /// check after the upload (one wording, `TransferError.changedWhileSendingText`).
    @Test func aChangeSeenWhileSendingSaysHow() {
        let text = SyncError.changedWhileSending(path: "/p/dist/a.txt", change: "it was modified").description
        #expect(text == "/p/dist/a.txt: changed while it was being uploaded (it was modified); it was not recorded as sent: "
                + "run again once nothing writes to it, to send the new version", "\(text)")
        #expect(text == TransferError.changedWhileSending(path: "/p/dist/a.txt", change: "it was modified").description)
    }

    /// Every case has a code of its own, a snake_case word that scripts match on; only HTTP
    /// and object-store errors, and a proxy's answer, have a status.
    @Test func codesAreDistinctWords() {
        let codes = Self.golden.map(\.0.code)
        let distinct = Set(codes)
        // Two samples each of .http, and a stall, which is the timeout it always was to
        // scripts (`timed_out`): the rest are one per case.
        #expect(distinct.count == codes.count - 4)
        #expect(distinct.count == 23, "one code per case of SyncError")
        for code in distinct {
            #expect(code.allSatisfy { $0.isLowercase || $0 == "_" }, "\(code)")
        }
        #expect(Self.golden.compactMap(\.0.httpStatus) == [404, 401, 503, 429, 407, 403])
    }
}

/// A program that shows errors through Foundation's `localizedDescription` gets syncr's message.
@Suite(.timeLimit(.minutes(5))) struct LocalizedErrorTests {
    @Test func localizedDescriptionIsTheMessage() {
        let error: any Error = SyncError.interrupted(.beforeStart)
        #expect(error.localizedDescription == "interrupted before it started")
        let busy: any Error = CacheLockError.busy(directory: "/c", pid: 7, waited: .zero)
        #expect(busy.localizedDescription == "another syncr run (PID 7) is using the cache /c")
    }
}
