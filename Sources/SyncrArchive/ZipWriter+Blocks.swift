#if canImport(Glibc)
import Glibc
#endif
import CZlib

// A file's data is cut into fixed-size blocks that are compressed independently, pigz-style, so
// that one large file keeps every core busy:
//
// - each block's deflate stream is primed with the 32 KiB before it (`deflateSetDictionary`), so
//   matches reach back across block boundaries as they would in one stream;
// - every block but the last ends with `Z_SYNC_FLUSH`, which closes the current deflate block
//   and pads to a byte boundary with an empty stored block; the last ends with `Z_FINISH`, which
//   sets BFINAL. Concatenated, the pieces are one valid raw deflate stream;
// - each block's CRC-32 is combined with `crc32_combine`.
//
// The cut points depend only on the file's size, never on the number of threads, so the archive
// is byte-identical whatever `threads` is.

/// How a file's data is to be stored, decided before its blocks are compressed.
enum ZipStoragePolicy: Sendable {
    /// Stored as is: already compressed by its extension, or compression level 0.
    case store
    /// Deflated, unless deflating the first block (all of a small file) saves less than 2%; the
    /// first block decides for all of the file's blocks.
    case trial
}

/// One block of one file: the unit of parallel work.
struct ZipBlockJob: Sendable {
    /// Index of the file in the sorted entry list.
    var entry: Int
    /// Block number within the file.
    var block: Int
    var offset: Int64
    var length: Int
    var isLast: Bool
    var policy: ZipStoragePolicy
    /// The file's size and modification time when the folder was scanned; the last block
    /// checks them once its data is read, to catch a file that changed while being zipped.
    var fileSize: Int64
    var modified: Int64
}

/// One compressed (or stored) block.
struct ZipBlockResult: Sendable {
    var bytes: [UInt8]
    var crc32: UInt32
    var length: Int
    var method: ZipWriter.ZipMethod
}

/// The file extensions whose contents are already compressed: deflating them costs time and
/// gains nothing, so they are stored without a trial. Compared case-insensitively.
enum ZipPrecompressed {
    static let extensions: Set<String> = [
        // archives and compressed streams
        "zip", "gz", "tgz", "bz2", "tbz", "tbz2", "xz", "txz", "zst", "tzst", "lz", "lz4", "lzma", "7z", "rar",
        "cab", "jar", "war", "apk", "aab", "whl", "nupkg", "deb", "rpm", "dmg", "zipx",
        // zip-based documents
        "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub",
        // images
        "jpg", "jpeg", "png", "gif", "webp", "heic", "heif", "avif", "jxl",
        // audio and video
        "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "mp4", "m4v", "mkv", "webm", "avi", "mov", "wmv",
        // fonts
        "woff", "woff2",
    ]

    /// Whether the stored name ends in one of `extensions`. (PDF is left to the trial: many PDFs
    /// hold uncompressed streams.)
    static func matches(_ name: [UInt8]) -> Bool {
        guard let dot = name.lastIndex(of: 0x2E), dot > (name.lastIndex(of: 0x2F) ?? -1) + 1 else { return false }
        let ext = name[(dot + 1)...]
        guard !ext.isEmpty, ext.count <= 6 else { return false }
        return extensions.contains(String(decoding: ext.map { $0 | 0x20 }, as: UTF8.self))
    }
}

/// The tuning of the block split.
enum ZipBlocks {
    /// Bytes per block. Large enough that the 32 KiB dictionary and the flush marker cost
    /// little (about 3% more hashing, a few bytes per block), small enough to spread one file
    /// over the cores.
    static let size = 1 << 20
    /// The deflate window: how much of the previous block primes the next.
    static let dictionary = 32 * 1024

    /// Whether deflating `length` bytes into `compressed` bytes saves too little (under 2%) to
    /// be worth a deflated entry.
    static func notWorthIt(length: Int, compressed: Int) -> Bool {
        compressed >= length - length / 50
    }

    /// An upper bound on the compressed size of `size` bytes cut into blocks: at worst deflate
    /// falls back to stored blocks (5 bytes per 64 KiB), plus a flush marker per block.
    static func compressedBound(_ size: Int64) -> UInt64 {
        let blocks = UInt64(size) / UInt64(Self.size) + 1
        return UInt64(size) + UInt64(size) >> 10 + blocks * 16 + 1024
    }

    /// How many blocks a file of `size` bytes is cut into.
    static func count(_ size: Int64) -> Int {
        Int((size + Int64(Self.size) - 1) / Int64(Self.size))
    }
}

/// Hands out the blocks of all files in archive order, each made as it is taken: a list of
/// every job up front would grow with the size of the data (one per MiB).
struct ZipJobCursor {
    private let entries: [ZipSourceEntry]
    /// Level 0: every file is stored.
    private let storeAll: Bool
    /// Jobs in all.
    let total: Int
    /// Jobs handed out so far: the index of the next one.
    private(set) var taken = 0
    private var entry = 0
    private var block = 0

    init(entries: [ZipSourceEntry], storeAll: Bool) {
        self.entries = entries
        self.storeAll = storeAll
        total = entries.reduce(0) { sum, entry in
            if case .file(let size) = entry.kind { return sum + ZipBlocks.count(size) }
            return sum
        }
    }

    mutating func next() -> ZipBlockJob? {
        while entry < entries.count {
            let source = entries[entry]
            if case .file(let size) = source.kind {
                let offset = Int64(block) * Int64(ZipBlocks.size)
                if offset < size {
                    let length = Int(min(Int64(ZipBlocks.size), size - offset))
                    let policy: ZipStoragePolicy = storeAll || ZipPrecompressed.matches(source.name) ? .store : .trial
                    let job = ZipBlockJob(entry: entry, block: block, offset: offset, length: length,
                                          isLast: offset + Int64(length) == size, policy: policy,
                                          fileSize: size, modified: source.modified)
                    block += 1
                    taken += 1
                    return job
                }
            }
            entry += 1
            block = 0
        }
        return nil
    }
}

/// One worker's zlib stream and buffers, reused from block to block. Owned by one thread.
final class ZipBlockCompressor {
    private var stream = z_stream()
    /// The dictionary followed by the block.
    private let input: UnsafeMutableRawBufferPointer
    private let output: UnsafeMutableRawBufferPointer
    private let level: Int32

    init(level: Int32) throws(ArchiveError) {
        self.level = level
        input = .allocate(byteCount: ZipBlocks.dictionary + ZipBlocks.size, alignment: 64)
        output = .allocate(byteCount: Int(ZipBlocks.compressedBound(Int64(ZipBlocks.size))), alignment: 64)
        let code = syncr_deflateInit2(&stream, max(1, level), Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)
        guard code == Z_OK else {
            input.deallocate()
            output.deallocate()
            throw .io(path: "zlib", errno: 0, detail: "cannot start deflate (zlib error \(code))")
        }
    }

    deinit {
        deflateEnd(&stream)
        input.deallocate()
        output.deallocate()
    }

    /// Reads and compresses one block. `decide` publishes (for block 0) or fetches (for later
    /// blocks) the method the file's trial chose.
    func run(_ job: ZipBlockJob, path: String,
             decide: (ZipBlockJob, () -> ZipWriter.ZipMethod) -> ZipWriter.ZipMethod) throws(ArchiveError) -> ZipBlockResult {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            // The block 0 worker must still publish a decision, or other blocks would wait forever.
            _ = decide(job) { .stored }
            throw .io(path: path, errno: errno, detail: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }

        if case .store = job.policy {
            var failure: ArchiveError?
            let bytes = [UInt8](unsafeUninitializedCapacity: job.length) { buffer, count in
                do throws(ArchiveError) {
                    try Self.readFully(fd, UnsafeMutableRawBufferPointer(buffer), at: job.offset, path: path)
                    count = job.length
                } catch {
                    failure = error
                    count = 0
                }
            }
            if let failure { throw failure }
            try Self.checkUnchanged(fd, job, path: path)
            var crc = CRC32()
            bytes.withUnsafeBytes { crc.update($0) }
            return ZipBlockResult(bytes: bytes, crc32: crc.value, length: job.length, method: .stored)
        }

        let dictionaryLength = Int(min(Int64(ZipBlocks.dictionary), job.offset))
        let span = UnsafeMutableRawBufferPointer(rebasing: input[0..<(dictionaryLength + job.length)])
        do throws(ArchiveError) {
            try Self.readFully(fd, span, at: job.offset - Int64(dictionaryLength), path: path)
            try Self.checkUnchanged(fd, job, path: path)
        } catch {
            _ = decide(job) { .stored }
            throw error
        }
        let dictionary = UnsafeRawBufferPointer(rebasing: input[0..<dictionaryLength])
        let block = UnsafeRawBufferPointer(rebasing: input[dictionaryLength..<(dictionaryLength + job.length)])
        var crc = CRC32()
        crc.update(block)

        // A file of one block decides on all of its data; a longer file on its whole first
        // block (1 MiB), once, in block 0. (A 64 KiB sample stored whole files whose start
        // happened to be incompressible: 3.5% larger archives than zip -6 in bench case 6.)
        let single = job.block == 0 && job.isLast
        var method = ZipWriter.ZipMethod.deflated
        if !single {
            method = decide(job) {
                guard let compressed = try? deflate(block, dictionary: nil, last: true, path: path) else { return .deflated }
                return ZipBlocks.notWorthIt(length: block.count, compressed: compressed) ? .stored : .deflated
            }
        }
        if method == .deflated {
            let produced = try deflate(block, dictionary: dictionaryLength > 0 ? dictionary : nil,
                                       last: job.isLast, path: path)
            if !(single && ZipBlocks.notWorthIt(length: job.length, compressed: produced)) {
                let bytes = Array(UnsafeRawBufferPointer(rebasing: output[0..<produced]))
                return ZipBlockResult(bytes: bytes, crc32: crc.value, length: job.length, method: .deflated)
            }
        }
        return ZipBlockResult(bytes: Array(block), crc32: crc.value, length: job.length, method: .stored)
    }

    /// Deflates `block` into `output` as one piece of a raw deflate stream; returns the length.
    private func deflate(_ block: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?,
                         last: Bool, path: String) throws(ArchiveError) -> Int {
        deflateReset(&stream)
        if let dictionary, let base = dictionary.baseAddress {
            let code = deflateSetDictionary(&stream, base.assumingMemoryBound(to: Bytef.self), uInt(dictionary.count))
            guard code == Z_OK else { throw .io(path: path, errno: 0, detail: "cannot set the deflate dictionary (zlib error \(code))") }
        }
        stream.next_in = block.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
        stream.avail_in = uInt(block.count)
        stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let code = CZlib.deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH)
        // The output buffer holds the worst case of a whole block, so one call always finishes.
        let done = last ? code == Z_STREAM_END : (code == Z_OK && stream.avail_in == 0 && stream.avail_out > 0)
        defer {
            stream.next_in = nil
            stream.next_out = nil
        }
        guard done else { throw .io(path: path, errno: 0, detail: "deflate did not finish a block (zlib error \(code))") }
        return output.count - Int(stream.avail_out)
    }

    /// For a file's last block: whether the file still has the size and time it had when the
    /// folder was scanned. (A file rewritten during the run would otherwise be stored as a mix
    /// of old and new bytes, or cut at its old size.)
    static func checkUnchanged(_ fd: Int32, _ job: ZipBlockJob, path: String) throws(ArchiveError) {
        guard job.isLast else { return }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw .io(path: path, errno: errno, detail: "cannot read: \(String(cString: strerror(errno)))")
        }
        if Int64(st.st_size) != job.fileSize || Int64(st.st_mtim.tv_sec) != job.modified {
            throw .io(path: path, errno: 0, detail: "the file changed while it was being zipped; zip it again once it stops changing")
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`, or says the file changed.
    static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
                          path: String) throws(ArchiveError) {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, errno: errno, detail: "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 {
                throw .io(path: path, errno: 0, detail: "the file shrank while it was being zipped; zip it again once it stops changing")
            }
            done += n
        }
    }
}
