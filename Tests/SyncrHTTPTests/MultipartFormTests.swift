#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import SyncrHTTP

/// Reads a whole body through `BodyReader`, the code the engine's read callback uses.
private func bodyBytes(_ body: RequestBody, bufferSize: Int = 7) throws -> [UInt8] {
    let reader = try BodyReader.open(body).get()
    return try reader.readAll(bufferSize: bufferSize).get()
}

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite("MultipartForm", .timeLimit(.minutes(10)))
struct MultipartFormTests {
    @Test(arguments: [1, 7, 64, 1 << 16])
    func exactBytesWithFixedBoundary(bufferSize: Int) throws {
        let a = try TempFile(contents: bytes("alpha\n"))
        let binary = (0...255).map { UInt8($0) }
        let b = try TempFile(contents: binary)
        let form = MultipartForm(parts: [
            .field(name: "title", value: "Hello wörld"),
            .field(name: "note", value: "line1\r\nline2"),
            try .file(name: "first", path: a.path, filename: "a.txt"),
            try .file(name: "second", path: b.path, filename: "b.bin"),
        ], boundary: "XyZ-boundary")
        #expect(form.boundary == "XyZ-boundary")
        #expect(form.contentType == "multipart/form-data; boundary=XyZ-boundary")
        let expected = bytes("""
            --XyZ-boundary\r
            Content-Disposition: form-data; name="title"\r
            \r
            Hello wörld\r
            --XyZ-boundary\r
            Content-Disposition: form-data; name="note"\r
            \r
            line1\r
            line2\r
            --XyZ-boundary\r
            Content-Disposition: form-data; name="first"; filename="a.txt"\r
            Content-Type: text/plain\r
            \r
            alpha\n\r
            --XyZ-boundary\r
            Content-Disposition: form-data; name="second"; filename="b.bin"\r
            Content-Type: application/octet-stream\r
            \r

            """) + binary + bytes("\r\n--XyZ-boundary--\r\n")
        let produced = try bodyBytes(.multipart(form), bufferSize: bufferSize)
        #expect(produced == expected)
        #expect(form.length == Int64(produced.count))
    }

    @Test func emptyFormAndEmptyFile() throws {
        #expect(try bodyBytes(.multipart(MultipartForm(parts: [], boundary: "b"))) == bytes("--b--\r\n"))
        let empty = try TempFile()
        let form = MultipartForm(parts: [try .file(name: "f", path: empty.path, filename: "e")], boundary: "b")
        let produced = try bodyBytes(.multipart(form))
        #expect(produced == bytes("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"e\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n"))
        #expect(form.length == Int64(produced.count))
    }

    @Test func namesAndFilenamesAreEscapedLikeBrowsers() throws {
        #expect(MultipartForm.escape("a\"b\r\nc\\d é") == "a%22b%0D%0Ac\\d é")
        let file = try TempFile(contents: [1])
        let form = MultipartForm(parts: [
            .field(name: "we\"ird\nname", value: "v\"alue"),
            try .file(name: "f", path: file.path, filename: "evil\"\r\nX-Injected: 1.txt",
                      contentType: "text/plain\r\nX-Injected: 2"),
        ], boundary: "bnd")
        let text = String(decoding: try bodyBytes(.multipart(form)), as: UTF8.self)
        #expect(text.contains("name=\"we%22ird%0Aname\"\r\n\r\nv\"alue\r\n"))
        #expect(text.contains("filename=\"evil%22%0D%0AX-Injected: 1.txt\"\r\n"))
        // A content type cannot end its header line early either.
        #expect(text.contains("Content-Type: text/plain  X-Injected: 2\r\n"))
        #expect(!text.contains("\r\nX-Injected"))
    }

    @Test func boundaryIsRegeneratedWhenItOccursInTheForm() throws {
        let inValue = MultipartForm(parts: [.field(name: "a", value: "xx--XyZ--xx")], boundary: "XyZ")
        #expect(inValue.boundary != "XyZ")
        #expect(inValue.boundary.hasPrefix("----syncr") && inValue.boundary.count == 9 + 32)
        let inName = MultipartForm(parts: [.field(name: "XyZ", value: "")], boundary: "XyZ")
        #expect(inName.boundary != "XyZ")
        let file = try TempFile(contents: [1])
        let inFilename = MultipartForm(parts: [try .file(name: "f", path: file.path, filename: "XyZ.txt")],
                                       boundary: "XyZ")
        #expect(inFilename.boundary != "XyZ")
        // Not a valid RFC 2046 boundary: too long, or characters outside bchars.
        #expect(MultipartForm(parts: [], boundary: String(repeating: "a", count: 71)).boundary.hasPrefix("----syncr"))
        #expect(MultipartForm(parts: [], boundary: "a\"b").boundary.hasPrefix("----syncr"))
        #expect(MultipartForm(parts: [], boundary: "ok").boundary == "ok")
    }

    @Test func randomBoundariesAreAlphanumericAndDiffer() {
        let a = MultipartForm.randomBoundary(), b = MultipartForm.randomBoundary()
        #expect(a != b)
        #expect(a.dropFirst(9).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(MultipartForm.isValidBoundary(a))
    }

    @Test func filePartDefaults() throws {
        let file = try TempFile(contents: bytes("{}"))
        let part = try MultipartForm.Part.file(name: "doc", path: file.path)
        guard case .file(_, let filename, _, let type, let size) = part else { Issue.record("not a file part"); return }
        #expect(filename == file.path.split(separator: "/").last.map(String.init))
        #expect(type == "application/octet-stream")
        #expect(size == 2)
        let json = try MultipartForm.Part.file(name: "doc", path: file.path, filename: "x.JSON")
        #expect(json == .file(name: "doc", filename: "x.JSON", path: file.path, contentType: "application/json", size: 2))
        #expect(throws: TransferError.self) { try MultipartForm.Part.file(name: "x", path: "/nonexistent/file") }
        #expect(throws: TransferError.self) { try MultipartForm.Part.file(name: "x", path: "/tmp") }
    }

    @Test(arguments: [
        ("a.txt", "text/plain"), ("index.HTML", "text/html"), ("x.htm", "text/html"), ("s.css", "text/css"),
        ("app.js", "text/javascript"), ("d.json", "application/json"), ("d.xml", "application/xml"),
        ("t.csv", "text/csv"), ("t.tsv", "text/tab-separated-values"), ("README.md", "text/markdown"),
        ("p.pdf", "application/pdf"), ("i.png", "image/png"), ("i.jpg", "image/jpeg"), ("i.JPEG", "image/jpeg"),
        ("i.gif", "image/gif"), ("i.svg", "image/svg+xml"), ("i.webp", "image/webp"),
        ("favicon.ico", "image/vnd.microsoft.icon"), ("a.zip", "application/zip"),
        ("a.tar.gz", "application/gzip"), ("a.tgz", "application/gzip"), ("a.tar", "application/x-tar"),
        ("a.bz2", "application/x-bzip2"), ("a.xz", "application/x-xz"), ("a.zst", "application/zstd"),
        ("a.7z", "application/x-7z-compressed"), ("m.wasm", "application/wasm"), ("v.mp4", "video/mp4"),
        ("s.mp3", "audio/mpeg"), ("x.bin", "application/octet-stream"), ("noext", "application/octet-stream"),
        (".hidden", "application/octet-stream"), ("dir.d/file", "application/octet-stream"),
        ("x.unknown", "application/octet-stream"), ("/path/to/f.PNG", "image/png"),
    ])
    func contentTypeTable(name: String, type: String) {
        #expect(ContentType.forFilename(name) == type)
    }
}

@Suite("BodyReader", .timeLimit(.minutes(10)))
struct BodyReaderTests {
    @Test func fileBodyIsTheFileAndRewinds() throws {
        let content = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let file = try TempFile(contents: content)
        let reader = try BodyReader.open(.file(path: file.path)).get()
        #expect(reader.length == 100_000)
        var buffer = [UInt8](repeating: 0, count: 30_000)
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == 30_000)
        // curl rewinds to 0 before re-sending after a redirect.
        #expect(reader.seek(to: 0))
        #expect(try reader.readAll(bufferSize: 4096).get() == content)
        #expect(reader.seek(to: 99_990))
        #expect(try reader.readAll(bufferSize: 4096).get() == Array(content[99_990...]))
        #expect(!reader.seek(to: 100_001))
    }

    @Test func seekIntoTheMiddleOfAForm() throws {
        let file = try TempFile(contents: bytes("0123456789"))
        let form = MultipartForm(parts: [.field(name: "a", value: "b"),
                                         try .file(name: "f", path: file.path, filename: "f")], boundary: "q")
        let all = try bodyBytes(.multipart(form))
        let reader = try BodyReader.open(.multipart(form)).get()
        for offset in [0, 5, 60, all.count - 20, all.count - 1, all.count] {
            #expect(reader.seek(to: Int64(offset)))
            #expect(try reader.readAll(bufferSize: 3).get() == Array(all[offset...]))
        }
    }

    @Test func fileGrownSinceTheFormWasBuiltFailsBeforeSending() throws {
        let file = try TempFile(contents: bytes("abc"))
        let form = MultipartForm(parts: [try .file(name: "f", path: file.path)])
        _ = bytes("defg").withUnsafeBytes { pwrite(file.fd, $0.baseAddress, $0.count, 3) }
        guard case .failure(.changedWhileSending(let path, let change)) = BodyReader.open(.multipart(form)) else {
            Issue.record("expected changedWhileSending"); return
        }
        #expect(path == file.path)
        #expect(change == "it was 3 bytes when the upload was prepared and is 7 bytes now")
    }

    @Test func fileGrowingWhileSentFailsBeforeItsLastByte() throws {
        let file = try TempFile(contents: [UInt8](repeating: 7, count: 10_000))
        let reader = try BodyReader.open(.file(path: file.path)).get()
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == 4096)
        _ = [UInt8](repeating: 8, count: 10).withUnsafeBytes { pwrite(file.fd, $0.baseAddress, $0.count, 10_000) }
        // The very next buffer sees it, far from the body's end (which it checked only before).
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == nil)
        #expect(reader.position == 4096)
        guard case .changedWhileSending(let path, let change)? = reader.failure else { Issue.record("no failure"); return }
        #expect(path == file.path)
        #expect(change == "it was 10000 bytes when the upload started and is 10010 bytes now")
    }

    /// A part of an object store's multipart upload is read when it is sent, its checksum from
    /// the file as it was when the upload began: a file changed in between (same size) fails the
    /// part as a change while it is sent does. It was sent, and the store refused its checksum
    /// ("BadDigest"), which pointed at the network.
    @Test func aPartOfAFileChangedSinceTheUploadBeganFails() throws {
        let file = try TempFile(contents: [UInt8](repeating: 7, count: 10_000))
        var st = stat()
        #expect(fstat(file.fd, &st) == 0)
        let began = FileFingerprint(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                                    mtimeNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
        let unchanged = try BodyReader.open(.fileRange(path: file.path, offset: 4096, length: 4096, since: began)).get()
        #expect(try unchanged.readAll(bufferSize: 1024).get() == [UInt8](repeating: 7, count: 4096))

        let later = timespec(tv_sec: st.st_mtim.tv_sec + 5, tv_nsec: 0)
        _ = [UInt8](repeating: 8, count: 10).withUnsafeBytes { pwrite(file.fd, $0.baseAddress, $0.count, 5000) }
        let times = [later, later]
        _ = times.withUnsafeBufferPointer { futimens(file.fd, $0.baseAddress) }
        let reader = try BodyReader.open(.fileRange(path: file.path, offset: 4096, length: 4096, since: began)).get()
        var buffer = [UInt8](repeating: 0, count: 1024)
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == nil)
        guard case .changedWhileSending(let path, let change)? = reader.failure else { Issue.record("no failure"); return }
        #expect(path == file.path)
        #expect(change == "it was modified")
    }

    @Test func fileShrinkingWhileSentFails() throws {
        let file = try TempFile(contents: [UInt8](repeating: 7, count: 10_000))
        let reader = try BodyReader.open(.file(path: file.path)).get()
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == 4096)
        #expect(ftruncate(file.fd, 5000) == 0)
        var result: Int? = 1
        for _ in 0..<5 where result != nil && result != 0 {
            result = buffer.withUnsafeMutableBytes { reader.read(into: $0) }
        }
        // Never a short body that looks complete: the read fails instead of ending early.
        #expect(result == nil)
        guard case .changedWhileSending(let path, _)? = reader.failure else { Issue.record("no failure"); return }
        #expect(path == file.path)
    }

    @Test func missingFileFailsWithItsPath() {
        guard case .failure(.local(let path, let code, _)) = BodyReader.open(.file(path: "/nonexistent/x")) else {
            Issue.record("expected a local error"); return
        }
        #expect(path == "/nonexistent/x")
        #expect(code == ENOENT)
    }
}

@Suite("Upload retry rule", .timeLimit(.minutes(10)))
struct UploadRetryRuleTests {
    let policy = RetryPolicy(maxRetries: 3)
    let refused = TransferError.connection(url: "u", code: 7, message: "refused")
    let reset = TransferError.connection(url: "u", code: 55, message: "send failure")

    @Test func postIsRetriedOnlyWhenNothingWasSent() {
        #expect(policy.isRetryable(refused, method: .post, requestSent: false))
        #expect(!policy.isRetryable(reset, method: .post, requestSent: true))
        #expect(!policy.isRetryable(.timedOut(url: "u", message: "slow"), method: .post, requestSent: true))
        #expect(policy.isRetryable(.status(url: "u", code: 503, retryAfter: nil, body: ""), method: .post, requestSent: true))
        #expect(!policy.isRetryable(.status(url: "u", code: 500, retryAfter: nil, body: ""), method: .post, requestSent: true))
        #expect(!policy.isRetryable(.status(url: "u", code: 413, retryAfter: nil, body: ""), method: .post, requestSent: true))
    }

    @Test func putFollowsTheGeneralRule() {
        #expect(policy.isRetryable(reset, method: .put, requestSent: true))
        #expect(policy.isRetryable(.status(url: "u", code: 500, retryAfter: nil, body: ""), method: .put, requestSent: true))
        #expect(!policy.isRetryable(.status(url: "u", code: 413, retryAfter: nil, body: ""), method: .put, requestSent: true))
    }
}
