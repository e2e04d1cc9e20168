#if canImport(Glibc)
import Glibc
#endif

/// The body of a PUT or POST, streamed from disk as the transfer engine sends it.
///
/// The body's length is always known before the request starts, so it goes out with
/// `Content-Length` and never with chunked transfer coding (many upload endpoints, S3-style
/// presigned URLs among them, refuse chunked bodies with 411). Files are read in fixed-size
/// buffers as curl asks for them: a body is never read whole into memory, nor staged in a
/// temporary file.
public enum RequestBody: Sendable, Equatable {
    /// The bytes of one file, as they are when the transfer starts (sent with PUT).
    case file(path: String)
    /// `length` bytes of a file from `offset` (sent with PUT): one part of an object store's
    /// multipart upload, read from the file as it is sent. `since`: the file as it was when the
    /// upload began (its parts' checksums come from that version); a file changed since fails
    /// the part as a change while it is sent does, instead of the store refusing its checksum.
    case fileRange(path: String, offset: Int64, length: Int64, since: FileFingerprint? = nil)
    /// An RFC 7578 `multipart/form-data` form (sent with POST).
    case multipart(MultipartForm)

    /// The method a body of this kind is normally sent with.
    public var defaultMethod: HTTPRequest.Method {
        switch self {
        case .file, .fileRange: return .put
        case .multipart: return .post
        }
    }

    /// The `Content-Type` the request must carry for the body to be understood, if any.
    public var contentType: String? {
        switch self {
        case .file, .fileRange: return nil
        case .multipart(let form): return form.contentType
        }
    }
}

/// One stretch of a body: bytes held in memory (multipart headers, field values) or a whole file.
enum BodySegment: Sendable, Equatable {
    case bytes([UInt8])
    case file(path: String, size: Int64)

    var length: Int64 {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(_, let size): return size
        }
    }
}

/// Reads a body's segments in order, for `ReadAhead` (which curl's read and seek callbacks use).
///
/// Used by one thread at a time: whichever reads for `ReadAhead`, never the engine. A file is opened when the reader reaches it and closed when it
/// moves past it or the transfer ends, so a form with many files holds one descriptor at a time.
/// Each file is checked against the size, modification time and identity seen when the
/// transfer started, with every buffer read of it (one `fstat` of the open file, on the thread
/// that reads anyway): a file that changes while it is sent fails the transfer
/// (`.changedWhileSending`) at the next buffer, not only at its end, so neither does the server
/// get a whole body of mixed bytes nor does the rest of a large file go out for nothing.
final class BodyReader {
    private struct Piece {
        var segment: BodySegment
        /// Offset of the segment's first byte in the body.
        var start: Int64
        /// For a file: what `stat` said when the transfer started.
        var identity: FileIdentity?
        /// For a file range: where the segment's bytes start in the file.
        var fileOffset: Int64 = 0
    }

    struct FileIdentity: Equatable {
        var size: Int64
        var mtimeSeconds: Int
        var mtimeNanoseconds: Int
        var device: UInt64
        var inode: UInt64

        init(_ fingerprint: FileFingerprint) {
            size = fingerprint.size
            mtimeSeconds = Int(fingerprint.mtimeNanoseconds / 1_000_000_000)
            mtimeNanoseconds = Int(fingerprint.mtimeNanoseconds % 1_000_000_000)
            device = fingerprint.device
            inode = fingerprint.inode
        }

        init(_ st: stat) {
            size = Int64(st.st_size)
            mtimeSeconds = Int(st.st_mtim.tv_sec)
            mtimeNanoseconds = Int(st.st_mtim.tv_nsec)
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
        }
    }

    /// The body's total length: the request's `Content-Length`.
    let length: Int64
    private let pieces: [Piece]
    /// Where the next byte read comes from.
    private(set) var position: Int64 = 0
    /// Why reading stopped, once it did.
    private(set) var failure: TransferError?
    private var openIndex = -1
    private var fd: Int32 = -1

    private init(pieces: [Piece]) {
        self.pieces = pieces
        length = pieces.reduce(0) { $0 + $1.segment.length }
    }

    deinit { close() }

    /// Checks the body's files and prepares to read it.
    ///
    /// A `.file` body takes its length from the file now; a form's files must still have the size
    /// they had when the form was built (its `Content-Length` was computed from them).
    static func open(_ body: RequestBody) -> Result<BodyReader, TransferError> {
        let segments: [BodySegment]
        switch body {
        case .file(let path):
            switch statFile(path) {
            case .failure(let error): return .failure(error)
            case .success(let st): segments = [.file(path: path, size: Int64(st.st_size))]
            }
        case .fileRange(let path, let offset, let length, let since):
            switch statFile(path) {
            case .failure(let error): return .failure(error)
            case .success(let st) where Int64(st.st_size) < offset + length:
                return .failure(.changedWhileSending(path: path, change:
                    "it is \(st.st_size) bytes now, too short for bytes \(offset)-\(offset + length - 1)"))
            case .success(let st):
                let identity = since.map(FileIdentity.init) ?? FileIdentity(st)
                let piece = Piece(segment: .file(path: path, size: length), start: 0, identity: identity, fileOffset: offset)
                return .success(BodyReader(pieces: [piece]))
            }
        case .multipart(let form):
            segments = form.segments
        }
        var pieces: [Piece] = []
        var start: Int64 = 0
        for segment in segments {
            var identity: FileIdentity? = nil
            if case .file(let path, let size) = segment {
                switch statFile(path) {
                case .failure(let error): return .failure(error)
                case .success(let st):
                    identity = FileIdentity(st)
                    if Int64(st.st_size) != size {
                        return .failure(.changedWhileSending(path: path, change:
                            "it was \(size) bytes when the upload was prepared and is \(st.st_size) bytes now"))
                    }
                }
            }
            pieces.append(Piece(segment: segment, start: start, identity: identity))
            start += segment.length
        }
        return .success(BodyReader(pieces: pieces))
    }

    /// `stat` for a regular file, with a message that says what is wrong.
    static func statFile(_ path: String) -> Result<stat, TransferError> {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let code = errno
            return .failure(.local(path: path, errno: code, message: "cannot upload: " + String(cString: strerror(code))))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            return .failure(.local(path: path, errno: EINVAL, message: "cannot upload: not a regular file"))
        }
        return .success(st)
    }

    /// Fills `buffer` with the next bytes of the body.
    /// - Returns: the number of bytes written (0 at the end), or nil when reading failed (see `failure`).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if failure != nil { return nil }
        guard var out = buffer.baseAddress else { return 0 }
        var room = buffer.count
        var filled = 0
        while room > 0 && position < length {
            guard let index = pieceIndex(at: position) else { break }
            let piece = pieces[index]
            let within = position - piece.start
            let wanted = Int(min(Int64(room), piece.segment.length - within))
            switch piece.segment {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { source in
                    out.copyMemory(from: source.baseAddress! + Int(within), byteCount: wanted)
                }
                advance(&out, &room, &filled, by: wanted)
            case .file(let path, let size):
                guard let n = readFile(index: index, path: path, at: piece.fileOffset + within, into: out, count: wanted) else {
                    return nil
                }
                // With every buffer, so that a change stops the body within a buffer or two
                // of it, and at the end, so that no body ends with bytes of another version.
                if !stillUnchanged(index: index, path: path) { return nil }
                advance(&out, &room, &filled, by: n)
                if within + Int64(n) == size { closeFile() }
            }
        }
        return filled
    }

    private func advance(_ out: inout UnsafeMutableRawPointer, _ room: inout Int, _ filled: inout Int, by n: Int) {
        out += n
        room -= n
        filled += n
        position += Int64(n)
    }

    /// Moves to `offset` in the body, where `ReadAhead` reads next.
    func seek(to offset: Int64) -> Bool {
        guard failure == nil, offset >= 0, offset <= length else { return false }
        position = offset
        return true
    }

    /// Closes the open file, if any.
    func close() { closeFile() }

    private func pieceIndex(at offset: Int64) -> Int? {
        // Forms have few pieces: a linear scan is fine.
        pieces.lastIndex { $0.start <= offset && offset < $0.start + $0.segment.length }
    }

    private func readFile(index: Int, path: String, at offset: Int64, into out: UnsafeMutableRawPointer,
                          count: Int) -> Int? {
        if openIndex != index {
            closeFile()
            let opened = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { return fail(path, errno, "cannot open: " + String(cString: strerror(errno))) }
            fd = opened
            openIndex = index
            // The file opened may be another than the one measured (replaced by a rename).
            if !stillUnchanged(index: index, path: path) { return nil }
        }
        while true {
            let n = pread(fd, out, count, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                return fail(path, errno, "cannot read: " + String(cString: strerror(errno)))
            }
            if n == 0 {
                let size = pieces[index].identity?.size ?? 0
                return changed(path, "it ended after \(offset) of the \(size) bytes being sent")
            }
            return n
        }
    }

    /// Whether the open file still has the size, time and identity it had when the transfer started.
    private func stillUnchanged(index: Int, path: String) -> Bool {
        guard let before = pieces[index].identity else { return true }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            _ = fail(path, errno, "cannot read: " + String(cString: strerror(errno)))
            return false
        }
        let now = FileIdentity(st)
        if now == before { return true }
        let what = now.size != before.size
            ? "it was \(before.size) bytes when the upload started and is \(now.size) bytes now"
            : (now.inode != before.inode || now.device != before.device) ? "it was replaced" : "it was modified"
        _ = changed(path, what)
        return false
    }

    private func changed(_ path: String, _ change: String) -> Int? {
        failure = .changedWhileSending(path: path, change: change)
        closeFile()
        return nil
    }

    private func fail(_ path: String, _ code: Int32, _ message: String) -> Int? {
        failure = .local(path: path, errno: code, message: message)
        closeFile()
        return nil
    }

    private func closeFile() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        openIndex = -1
    }

    /// The whole body in memory, for tests of small bodies.
    func readAll(bufferSize: Int = 7) -> Result<[UInt8], TransferError> {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(into: $0) }
            guard let n else { return .failure(failure!) }
            if n == 0 { return .success(all) }
            all.append(contentsOf: buffer[0..<n])
        }
    }
}
