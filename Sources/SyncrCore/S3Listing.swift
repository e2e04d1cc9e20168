import SyncrHTTP
import SyncrManifest
import SyncrS3

extension SyncError {
    /// The run was interrupted while this entry was being worked on.
    var isInterruption: Bool {
        if case .interrupted = self { return true }
        return false
    }
}

/// A download of every object under an `s3://bucket/prefix/`: listed with ListObjectsV2 (every
/// page), each object becomes a download of its own into the entry's folder, named by the rest
/// of its key.
enum S3Listing {
    /// At most this much of one page's XML is read (a page holds at most 1,000 keys of at most
    /// 1,024 bytes each, escaped): memory stays bounded whatever the bucket holds.
    static let pageLimit = 4 << 20

    /// The downloads `download` stands for, or why it could not be listed. An object that
    /// cannot be written (`filesThatAreFolders`) is an entry that fails, and the others go on.
    static func expand(_ download: Download, engine: any Transport, redactor: Redactor) async -> Result<[Session.Entry], SyncError> {
        guard let location = download.s3, location.isPrefix else { return .success([.download(download)]) }
        if let message = S3Stores.failure(url: download.url, settings: download.settings) {
            return .failure(.other(message: message))
        }
        let builder = RequestBuilder(download: download)
        var retrying = Retrying(retries: download.settings.retries, index: download.index, kind: .download,
                                reporter: nil, redactor: redactor)
        retrying.s3 = builder.s3
        var downloads: [Download] = []
        var markers = 0
        var token: String?
        repeat {
            let page: ListObjectsPage
            do {
                page = try await fetchPage(location, token: token, builder: builder, retrying: retrying, engine: engine)
            } catch let failure as SyncError {
                return .failure(failure)
            } catch {
                return .failure(.interrupted(.whileAsking))
            }
            for object in page.objects {
                // A key ending in `/` is a folder marker (consoles make them): nothing to fetch.
                if object.key.hasSuffix("/") {
                    markers += 1
                    continue
                }
                switch entry(download, key: object.key, under: location) {
                case .success(var one):
                    one.object = downloads.count
                    downloads.append(one)
                case .failure(let failure): return .failure(failure)
                }
            }
            token = page.continuationToken
        } while token != nil
        // Nothing under the prefix is more often a typo (keys are case-sensitive) than a
        // mirror of nothing: said, as an upload of an empty folder is.
        guard !downloads.isEmpty else {
            let message = markers > 0
                ? "\(download.url.written): only folder markers under this prefix (\(markers) key\(markers == 1 ? "" : "s") ending in '/'), "
                    + "no object to download; put the objects there, or remove the entry"
                : "\(download.url.written): no object under this prefix; check the bucket and the prefix (keys are case-sensitive)"
            return .failure(.other(message: redactor.scrub(message)))
        }
        // The file of such a pair fails before anything is fetched (it failed once downloaded,
        // when its move into place met the folder, or made the folder's objects fail).
        let folder = download.destination.utf8.count + 1
        let relative = downloads.map { String(decoding: $0.destination.utf8.dropFirst(folder), as: UTF8.self) }
        let clashes = filesThatAreFolders(relative)
        return .success(zip(downloads, relative).map { one, path in
            guard let inner = clashes[PathKey(path)] else { return .download(one) }
            let message = "\(download.url.written): the object \"\(location.key)\(path)\" is also the folder of the object "
                + "\"\(location.key)\(inner)\", so \(one.to) cannot be both a file and a folder; rename one of them in "
                + "the bucket, or name the objects one by one"
            return .unlisted(one, .other(message: redactor.scrub(message)))
        })
    }

    /// The relative paths that are also the folder of others (the keys `a` and `a/b`), told
    /// apart by their bytes (`PathKey`), each with one path inside it. A store holds both; a
    /// file system cannot. Each folder is walked up from once, so a listing costs its paths'
    /// length, however deep they nest.
    static func filesThatAreFolders(_ paths: [String]) -> [PathKey: String] {
        let files = Set(paths.map(PathKey.init))
        var walked: Set<PathKey> = []
        var clashes: [PathKey: String] = [:]
        for path in paths {
            var folder = path.utf8[...]
            while let slash = folder.lastIndex(of: UInt8(ascii: "/")) {
                folder = folder[..<slash]
                let name = PathKey(String(decoding: folder, as: UTF8.self))
                // Its own folders were walked then: nothing more to find up there.
                guard walked.insert(name).inserted else { break }
                if files.contains(name) { clashes[name] = path }
            }
        }
        return clashes
    }

    /// One page, through the retry loop.
    static func fetchPage(_ location: S3Location, token: String?, builder: RequestBuilder, retrying: Retrying,
                          engine: any Transport) async throws -> ListObjectsPage {
        let url = builder.s3!.url(key: "", query: ListObjectsPage.query(prefix: location.key, continuationToken: token))
        let request = builder.finish(HTTPRequest(url: url, displayURL: builder.displayURL), lowSpeed: nil)
        return try await retrying.run {
            let sink = BodyPrefixSink(limit: pageLimit)
            switch await engine.perform(S3Object.resigned(request, by: builder.s3), sink: sink) {
            case .failure(let error):
                return .failed(error, position: 0)
            case .success(let response):
                if let error = response.statusError(url: builder.displayURL) { return .failed(error, position: 0) }
                guard let page = ListObjectsPage(parsing: String(decoding: sink.bytes, as: UTF8.self)) else {
                    return .failed(.invalidResponse(url: builder.displayURL, message: "the store's listing could not be read"),
                                   position: 0, retryable: false)
                }
                return .done(page)
            }
        }
    }

    /// The download of one object: the prefix entry's settings, the object's own URL, and a
    /// destination inside the entry's folder. A key whose rest would leave that folder (`..`,
    /// a leading `/`, an empty or `.` component) or holds a NUL is refused, naming it.
    static func entry(_ download: Download, key: String, under location: S3Location) -> Result<Download, SyncError> {
        // On bytes, as the kernel reads the path: a Character-wise split missed a `/` followed
        // by a combining mark (`../\u{301}x` climbed out), and dropping the prefix by Characters
        // could take a combining mark after it along.
        let relative = String(decoding: key.utf8.dropFirst(location.key.utf8.count), as: UTF8.self)
        let parts = relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard !relative.isEmpty, !relative.utf8.contains(0),
              parts.allSatisfy({ !$0.isEmpty && !$0.elementsEqual([0x2E]) && !$0.elementsEqual([0x2E, 0x2E]) }) else {
            return .failure(.other(message:
                "\(download.url.written): the object key \"\(key)\" would not stay inside \(download.to) (an empty, '.' or '..' part, or a leading '/'); rename it in the bucket, or name the objects one by one"))
        }
        var one = download
        let url = "s3://\(location.bucket)/\(key)"
        one.url = Template(written: url, expanded: url, secrets: [])
        one.to = download.to.hasSuffix("/") ? download.to + relative : download.to + "/" + relative
        one.destination = download.destination + "/" + relative
        return .success(one)
    }
}
