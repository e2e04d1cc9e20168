#if canImport(Glibc)
import Glibc
#endif

/// The archive under construction: a temporary file beside the final name, written through a
/// buffer with positional writes, renamed into place only when complete.
final class ZipOutputFile {
    /// The final name.
    let destination: String
    /// The temporary name the archive is built under.
    let temporary: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Where `buffer` starts in the file.
    private var bufferOffset: UInt64 = 0
    private static let bufferCapacity = 1 << 20

    /// Bytes written so far (including buffered ones): the offset of the next record.
    var position: UInt64 { bufferOffset + UInt64(buffer.count) }

    /// Creates `.<name>.<random>.tmp` beside `destination`, with the usual permissions (0666
    /// less the umask), never replacing anything.
    init(destination: String) throws(ArchiveError) {
        self.destination = destination
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let base = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var attempt = 0
        while true {
            let random = UInt64.random(in: 0...UInt64.max)
            let name = folder + "." + base + "." + String(random, radix: 36) + ".tmp"
            let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd >= 0 {
                self.fd = fd
                self.temporary = name
                break
            }
            if errno != EEXIST || attempt > 100 {
                throw .io(path: destination, errno: errno,
                          detail: "cannot create the archive beside it (\(name)): \(String(cString: strerror(errno)))")
            }
            attempt += 1
        }
        buffer.reserveCapacity(Self.bufferCapacity)
    }

    deinit {
        // Not finished: never leave a partial archive behind.
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }

    func write(_ bytes: [UInt8]) throws(ArchiveError) {
        if bytes.count >= Self.bufferCapacity / 2 {
            // Large data goes straight to the file, no copy through the buffer; what is buffered
            // goes first, since it comes first.
            try flush()
            try writeFully(bytes, at: bufferOffset)
            bufferOffset += UInt64(bytes.count)
        } else {
            if buffer.count + bytes.count > Self.bufferCapacity { try flush() }
            buffer.append(contentsOf: bytes)
        }
    }

    /// Overwrites bytes written earlier (a local header, once its entry's CRC and sizes are
    /// known). The bytes are never split between the buffer and the file: `write` appends each
    /// piece whole, and `flush` writes out the whole buffer.
    func patch(_ bytes: [UInt8], at offset: UInt64) throws(ArchiveError) {
        if offset >= bufferOffset {
            let start = Int(offset - bufferOffset)
            buffer.replaceSubrange(start..<(start + bytes.count), with: bytes)
        } else {
            try writeFully(bytes, at: offset)
        }
    }

    private func flush() throws(ArchiveError) {
        guard !buffer.isEmpty else { return }
        try writeFully(buffer, at: bufferOffset)
        bufferOffset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeFully(_ bytes: [UInt8], at offset: UInt64) throws(ArchiveError) {
        let failure: Int32? = bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += n
            }
            return nil
        }
        if let failure {
            throw .io(path: destination, errno: failure, detail: "cannot write the archive: \(String(cString: strerror(failure)))")
        }
    }

    /// Writes what is buffered, optionally flushes it to the disk, and renames the archive
    /// into place.
    func commit(sync: Bool) throws(ArchiveError) {
        try flush()
        if sync && fdatasync(fd) != 0 {
            throw .io(path: destination, errno: errno, detail: "cannot flush the archive to disk: \(String(cString: strerror(errno)))")
        }
        let closed = close(fd)
        fd = -1
        guard closed == 0 else {
            let code = errno
            unlink(temporary)
            throw .io(path: destination, errno: code, detail: "cannot finish writing the archive: \(String(cString: strerror(code)))")
        }
        guard rename(temporary, destination) == 0 else {
            let code = errno
            unlink(temporary)
            throw .io(path: destination, errno: code, detail: "cannot move the finished archive into place: \(String(cString: strerror(code)))")
        }
    }
}
