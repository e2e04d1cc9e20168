#if canImport(Glibc)
import Glibc
#endif

/// What reading a tar file found besides its entries.
public struct TarReadResult: Sendable, Equatable {
    /// The file was a gzip stream (`.tar.gz`, `.tgz`).
    public var compressed: Bool
    /// gzip members read (concatenated gzip files are one stream); 0 for a plain tar.
    public var gzipMembers: Int
    /// Notes from the reader (ignored pax keywords, a missing second zero block, data after the
    /// end of the archive left unread).
    public var notes: [String]
}

extension TarReader {
    /// Bytes read from the file at a time.
    static let inputBufferSize = 64 * 1024
    /// After the end of the tar archive, the rest of its gzip member is still inflated (and
    /// dropped) so that the member's CRC-32 vouches for the data extracted: tar itself has no
    /// checksum over data. Past this many bytes the rest is left unread, with a note.
    static let maxInflatedAfterEnd: Int64 = 16 << 20

    /// Reads a `.tar`, `.tar.gz` or `.tgz` file from start to end, handing its entries to
    /// `handler`. A gzip layer is recognised by its magic bytes, whatever the file's name;
    /// concatenated gzip members are read as one stream. Memory stays fixed whatever the size.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - archive: the archive's name in messages (default: the file's last path component).
    ///   - limits: `maxRatio` and `ratioFloor`, when set, apply to the gzip stream as a whole
    ///     (tar.gz has no per-entry compressed size).
    ///   - handler: gets every entry.
    /// - Throws: `ArchiveError`: `.corrupt` for a broken or cut short archive or gzip stream,
    ///   `.limit` for a stream that expands too much, `.io` when the file cannot be read, and
    ///   whatever `handler` throws.
    @discardableResult
    public static func read(file path: String, archive: String? = nil, limits: ExtractionLimits = ExtractionLimits(),
                            handler: any TarEntryHandler) throws(ArchiveError) -> TarReadResult {
        let archive = archive ?? String(path.split(separator: "/").last ?? Substring(path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .io(path: path, errno: errno, detail: "cannot open the archive: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: inputBufferSize, alignment: 16)
        defer { buffer.deallocate() }

        func fill() throws(ArchiveError) -> UnsafeRawBufferPointer {
            // Fill the buffer as far as the file goes, so the first chunk holds the magic bytes.
            var count = 0
            while count < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .io(path: path, errno: errno, detail: "cannot read the archive: \(String(cString: strerror(errno)))")
                }
                if n == 0 { break }
                count += n
            }
            return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        }

        let reader = TarReader(archive: archive, handler: handler)
        var chunk = try fill()
        let compressed = ArchiveFormat.sniff(chunk.prefix(2)) == .gzip
        guard compressed else {
            while !chunk.isEmpty {
                try reader.consume(chunk)
                // Whatever follows the end of the archive is ignored unread.
                if reader.isAtEnd { break }
                chunk = try fill()
            }
            try reader.finish()
            return TarReadResult(compressed: false, gzipMembers: 0, notes: reader.notes)
        }

        let inflater: Inflater
        do {
            inflater = try Inflater(.gzip)
        } catch {
            throw .io(path: path, errno: 0, detail: "cannot start zlib: \(error)")
        }
        var members = 1
        // Over all members: zlib's own counters start over at each reset.
        var inBefore: Int64 = 0
        var produced: Int64 = 0
        var afterEnd: Int64 = 0
        var stoppedAfterEnd = false

        reading: while !chunk.isEmpty {
            var position = 0
            while position < chunk.count {
                if inflater.finished {
                    // Once the tar archive is over, the rest (more members, trailing bytes) is
                    // ignored, as GNU tar ignores what follows the end-of-archive blocks.
                    if reader.isAtEnd { break reading }
                    inBefore += inflater.totalIn
                    inflater.reset()
                    members += 1
                }
                do {
                    position += try inflater.feed(UnsafeRawBufferPointer(rebasing: chunk[position...])) { piece in
                        produced += Int64(piece.count)
                        if reader.isAtEnd {
                            afterEnd += Int64(piece.count)
                            if afterEnd > maxInflatedAfterEnd { throw StopReading() }
                            return
                        }
                        let consumed = inBefore + inflater.totalIn
                        if let ratio = limits.maxRatio, produced > limits.ratioFloor,
                           case let (allowed, overflow) = max(consumed, 1).multipliedReportingOverflow(by: ratio),
                           !overflow, produced > allowed {
                            throw ArchiveError.limit(archive: archive, entry: reader.lastEntryName,
                                                     detail: "the gzip stream expands more than \(ratio) times (\(produced) bytes from \(consumed))")
                        }
                        try reader.consume(piece)
                    }
                } catch let error as ArchiveError {
                    throw error
                } catch is StopReading {
                    stoppedAfterEnd = true
                    break reading
                } catch {
                    let detail = (error as? ZlibError)?.message ?? "\(error)"
                    throw .corrupt(archive: archive, entry: reader.lastEntryName,
                                   detail: "the gzip stream is damaged: \(detail)")
                }
            }
            chunk = try fill()
        }
        if stoppedAfterEnd {
            reader.addNote("more than \(maxInflatedAfterEnd >> 20) MiB of data follow the end of the archive in its gzip stream; they were not read, so the gzip checksum was not verified")
        } else if !inflater.finished {
            throw .corrupt(archive: archive, entry: reader.lastEntryName,
                           detail: "the gzip stream is cut short")
        }
        try reader.finish()
        return TarReadResult(compressed: true, gzipMembers: members, notes: reader.notes)
    }
}

/// Ends inflating the data after the end of a tar archive.
private struct StopReading: Error {}
