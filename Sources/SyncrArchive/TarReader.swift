/// One entry of a tar archive, with every extended header (pax `x` and `g`, GNU `L` and `K`)
/// already applied.
public struct TarEntry: Sendable, Equatable {
    /// What the entry is.
    public enum Kind: Sendable, Equatable {
        /// A regular file (`0`, NUL, or `7`, contiguous); its `size` bytes of data follow.
        case file
        /// A folder (`5`, GNU's `D`, or an old-style NUL-typed entry whose name ends in `/`).
        case directory
        /// A symbolic link (`2`) to `target`, as stored.
        case symbolicLink(target: String)
        /// A hard link (`1`): a second name for the earlier entry named `target`.
        case hardLink(target: String)
        /// A character device (`3`).
        case characterDevice
        /// A block device (`4`).
        case blockDevice
        /// A FIFO (`6`).
        case fifo
    }

    /// The entry's name as stored (`/`-separated, not yet checked for safety).
    public var name: String
    public var kind: Kind
    /// Permission bits (`0o7777` at most).
    public var mode: UInt32
    /// Bytes of data: the file's size for `.file`, 0 for the rest.
    public var size: Int64
    /// Seconds since the epoch (pax `mtime`, rounded down, else the header's).
    public var modificationTime: Int64
    public var userID: Int64
    public var groupID: Int64
    public var userName: String
    public var groupName: String
}

/// Receives the entries of a tar archive as `TarReader` finds them: `begin`, then the data of a
/// file in pieces, then `end`.
public protocol TarEntryHandler: AnyObject {
    /// An entry's header was read.
    func begin(_ entry: TarEntry) throws(ArchiveError)
    /// The next piece of the current file's data (only for `.file` entries).
    func data(_ bytes: UnsafeRawBufferPointer, of entry: TarEntry) throws(ArchiveError)
    /// The current entry's data is complete.
    func end(_ entry: TarEntry) throws(ArchiveError)
}

/// Reads a tar stream pushed to it in pieces of any size, and hands its entries to a handler.
///
/// A state machine, so that bytes can come straight out of zlib (or a file) without seeking, and
/// memory stays fixed: one 512-byte header buffer, plus extended header data capped at
/// `maxExtendedHeaderSize`. File data is passed through as it arrives.
///
/// Reads POSIX ustar and pax and GNU tar archives: octal and base-256 numbers, ustar `prefix`,
/// pax `x` headers (`path`, `linkpath`, `size`, `mtime`, `uid`, `gid`, `uname`, `gname`),
/// pax `g` headers (see `applyGlobal`), GNU long names (`L`) and link names (`K`). Refuses
/// sparse files (`S`, pax `GNU.sparse.*`), multi-volume parts (`M`) and unknown types.
///
/// The archive ends at a zero block: GNU tar and Python's tarfile stop there too, whether or not
/// the second zero block follows. Whatever comes after is ignored. An archive that simply stops
/// without one is refused as cut short: a tar has no other way to tell a complete archive from
/// a download that ended early at a block boundary.
public final class TarReader {
    /// The archive's name, for messages.
    public let archive: String
    private let handler: any TarEntryHandler

    /// Extended header data (pax or GNU long names) longer than this is refused: a name is at
    /// most 128 components of 255 bytes, and no reader needs megabytes of metadata for one entry.
    public static let maxExtendedHeaderSize = 1 << 20

    private enum Phase {
        /// Filling `header`.
        case header
        /// Filling the block after a first zero block.
        case secondZeroBlock
        /// `remaining` bytes of payload, then `padding` to the next 512-byte boundary.
        case payload
        /// Past the end of the archive: the rest is ignored.
        case end
    }

    /// Where payload bytes go.
    private enum Sink {
        case file
        case discard
        case extended(UInt8)
    }

    private var phase = Phase.header
    private var header = [UInt8](repeating: 0, count: TarHeader.blockSize)
    private var headerFill = 0
    private var sink = Sink.discard
    private var remaining: Int64 = 0
    private var padding = 0
    private var current: TarEntry?
    private var extended: [UInt8] = []

    private var pendingPax: PaxRecords?
    private var globalPax = PaxRecords()
    private var pendingLongName: [UInt8]?
    private var pendingLongLink: [UInt8]?

    /// Bytes of the tar stream read so far (after decompression).
    public private(set) var offset: Int64 = 0
    /// The end of the archive was found; more input is ignored.
    public var isAtEnd: Bool { if case .end = phase { true } else { false } }
    /// The entry being read (or the last one read), for messages.
    public private(set) var lastEntryName: String?
    /// Things worth telling the user that did not stop the reading (ignored pax keywords, a
    /// missing second zero block).
    public private(set) var notes: [String] = []

    /// - Parameters:
    ///   - archive: the archive's name, for messages.
    ///   - handler: gets every entry.
    public init(archive: String, handler: any TarEntryHandler) {
        self.archive = archive
        self.handler = handler
    }

    /// Reads the next piece of the tar stream.
    public func consume(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) {
        var position = 0
        let count = bytes.count
        while position < count {
            switch phase {
            case .end:
                offset += Int64(count - position)
                return
            case .header, .secondZeroBlock:
                let n = min(TarHeader.blockSize - headerFill, count - position)
                header.withUnsafeMutableBytes { buffer in
                    buffer.baseAddress!.advanced(by: headerFill)
                        .copyMemory(from: bytes.baseAddress!.advanced(by: position), byteCount: n)
                }
                headerFill += n
                position += n
                offset += Int64(n)
                if headerFill == TarHeader.blockSize {
                    headerFill = 0
                    try readHeaderBlock()
                }
            case .payload:
                if remaining > 0 {
                    let n = Int(min(Int64(count - position), remaining))
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
                    position += n
                    offset += Int64(n)
                    remaining -= Int64(n)
                    switch sink {
                    case .file: try handler.data(piece, of: current!)
                    case .discard: break
                    case .extended: extended.append(contentsOf: piece)
                    }
                    if remaining == 0 { try payloadDone() }
                } else {
                    let n = min(padding, count - position)
                    position += n
                    offset += Int64(n)
                    padding -= n
                }
                if remaining == 0 && padding == 0, case .payload = phase { phase = .header }
            }
        }
    }

    /// Call at the end of the input: throws when the archive was cut short.
    public func finish() throws(ArchiveError) {
        switch phase {
        case .end:
            return
        case .secondZeroBlock:
            // GNU tar warns and succeeds; so do we.
            addNote("the archive ends after a single zero block (a complete archive has two)")
            phase = .end
        case .header:
            if headerFill > 0 {
                let name = header.withUnsafeBytes { headerFill >= 100 ? TarHeader.rawName($0) : nil }
                throw .corrupt(archive: archive, entry: name ?? lastEntryName,
                               detail: "cut short inside \(name == nil ? "the header after this entry" : "its header") (\(headerFill) of 512 bytes at offset \(offset - Int64(headerFill)))")
            }
            if offset == 0 {
                throw .corrupt(archive: archive, entry: nil, detail: "the archive is empty")
            }
            throw .corrupt(archive: archive, entry: lastEntryName,
                           detail: "the archive stops after this entry without its end-of-archive blocks: it is probably cut short")
        case .payload:
            switch sink {
            case .file, .discard:
                if remaining > 0, let current {
                    throw .corrupt(archive: archive, entry: current.name,
                                   detail: "cut short inside its data (\(current.size - remaining) of \(current.size) bytes)")
                }
                throw .corrupt(archive: archive, entry: lastEntryName,
                               detail: "cut short in the padding after this entry's data")
            case .extended(let type):
                throw .corrupt(archive: archive, entry: lastEntryName,
                               detail: "cut short inside \(Self.describe(type)) after this entry")
            }
        }
    }

    func addNote(_ text: String) {
        // Bounded: an archive of a million `g` headers must not grow memory.
        if notes.count < 100 { notes.append(text) }
    }

    private static func describe(_ type: UInt8) -> String {
        switch type {
        case UInt8(ascii: "x"): return "a pax extended header"
        case UInt8(ascii: "g"): return "a pax global header"
        case UInt8(ascii: "L"): return "a GNU long name"
        default: return "a GNU long link name"
        }
    }

    private var hasPendingExtendedHeaders: Bool {
        pendingPax != nil || pendingLongName != nil || pendingLongLink != nil
    }

    private func startPayload(_ sink: Sink, size: Int64) throws(ArchiveError) {
        self.sink = sink
        remaining = size
        padding = Int((TarHeader.blockSize - Int(size % Int64(TarHeader.blockSize))) % TarHeader.blockSize)
        phase = .payload
        if size == 0 { try payloadDone() }
        if remaining == 0 && padding == 0, case .payload = phase { phase = .header }
    }

    private func readHeaderBlock() throws(ArchiveError) {
        let position = offset - Int64(TarHeader.blockSize)
        let isZero = header.withUnsafeBytes { TarHeader.isZeroBlock($0) }
        if case .secondZeroBlock = phase {
            if !isZero {
                // GNU tar (list.c, read_and) stops here too, with "A lone zero block".
                addNote("a lone zero block at offset \(position) ends the archive; what follows is ignored")
            }
            phase = .end
            return
        }
        if isZero {
            if hasPendingExtendedHeaders {
                throw .corrupt(archive: archive, entry: lastEntryName,
                               detail: "an extended header at the end of the archive describes no entry")
            }
            phase = .secondZeroBlock
            return
        }

        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        let result = header.withUnsafeBytes { block in
            Result { () throws(TarHeader.Problem) in try TarHeader.parse(block) }
        }
        let parsed: TarHeader
        switch result {
        case .success(let value):
            parsed = value
        case .failure(let error):
            let name = header.withUnsafeBytes { TarHeader.rawName($0) }
            let at = "at offset \(position)\(lastEntryName.map { " (after \($0))" } ?? "")"
            switch error {
            case .checksum(let stored, let unsigned, _):
                throw .corrupt(archive: archive, entry: name,
                               detail: "header checksum mismatch \(at): stored \(stored.map { String($0, radix: 8) } ?? "no number"), computed \(String(unsigned, radix: 8))")
            case .magic(let magic):
                throw .unsupported(archive: archive, entry: name,
                                   detail: "not a ustar or GNU tar header \(at) (magic \(magic.map { String($0, radix: 16) }.joined(separator: " "))): pre-POSIX (v7) archives are not read")
            case .field(let field):
                throw .corrupt(archive: archive, entry: name, detail: "the header's \(field) field is not a number \(at)")
            }
        }
        try dispatch(parsed)
    }

    private func dispatch(_ header: TarHeader) throws(ArchiveError) {
        let type = header.typeflag
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K"):
            guard header.size >= 0, header.size <= Self.maxExtendedHeaderSize else {
                throw .limit(archive: archive, entry: lastEntryName,
                             detail: "\(Self.describe(type)) of \(header.size) bytes (at most \(Self.maxExtendedHeaderSize) are read)")
            }
            extended.removeAll(keepingCapacity: true)
            try startPayload(.extended(type), size: header.size)
            return
        case UInt8(ascii: "V"):
            // A GNU volume label names the archive, not a file; GNU tar skips it on extraction.
            addNote("the volume label is ignored")
            try startPayload(.discard, size: max(header.size, 0))
            return
        default:
            break
        }

        let (entry, payload) = try makeEntry(header)
        current = entry
        lastEntryName = entry.name
        try handler.begin(entry)
        try startPayload(entry.kind == .file ? .file : .discard, size: payload)
    }

    private func decode(_ bytes: [UInt8], _ what: String, entry: String?) throws(ArchiveError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .unsupported(archive: archive, entry: entry ?? String(decoding: bytes, as: UTF8.self),
                               detail: "the \(what) is not UTF-8 (syncr keeps names byte for byte and reads only UTF-8 ones)")
        }
        return text
    }

    /// Applies the pending and global extended headers to a header. Returns the entry and the
    /// bytes of data that follow its header.
    private func makeEntry(_ header: TarHeader) throws(ArchiveError) -> (TarEntry, Int64) {
        let pax = pendingPax ?? PaxRecords()
        let longName = pendingLongName
        let longLink = pendingLongLink
        pendingPax = nil
        pendingLongName = nil
        pendingLongLink = nil

        // pax overrides a GNU long name, which overrides the header (GNU tar and libarchive agree).
        let nameBytes = pax["path"] ?? longName ?? header.path
        let name = try decode(nameBytes, "name", entry: nil)
        let linkBytes = pax["linkpath"] ?? longLink ?? header.linkname

        if header.typeflag == UInt8(ascii: "S") || pax.describesSparseFile {
            // pax sparse format 1.0 stores the file as `GNUSparseFile.<pid>/<name>`, the real
            // name in GNU.sparse.name.
            let real = pax["GNU.sparse.name"].flatMap { String(validating: $0, as: UTF8.self) }
            throw .unsupported(archive: archive, entry: real ?? name, detail: "GNU sparse files are not supported")
        }
        func number(_ key: String, _ fallback: Int64) throws(ArchiveError) -> Int64 {
            guard let value = pax[key] ?? globalPax[key] else { return fallback }
            guard let number = key == "mtime" ? PaxRecords.time(value) : PaxRecords.integer(value) else {
                throw .corrupt(archive: archive, entry: name,
                               detail: "the pax \(key) \"\(String(decoding: value, as: UTF8.self))\" is not a number")
            }
            return number
        }
        // Global headers never set `size` (see applyGlobal), so only the entry's own counts.
        var size = header.size
        if let value = pax["size"] {
            guard let number = PaxRecords.integer(value) else {
                throw .corrupt(archive: archive, entry: name, detail: "the pax size is not a number")
            }
            size = number
        }
        guard size >= 0 else {
            throw .corrupt(archive: archive, entry: name, detail: "a negative size (\(size))")
        }

        let kind: TarEntry.Kind
        switch header.typeflag {
        case 0 where name.hasSuffix("/"):
            // Pre-POSIX archives marked folders only by the trailing slash (Python's tarfile
            // reads them the same way).
            kind = .directory
        case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
            kind = .file
        case UInt8(ascii: "1"):
            kind = .hardLink(target: try decode(linkBytes, "hard link's target", entry: name))
        case UInt8(ascii: "2"):
            kind = .symbolicLink(target: try decode(linkBytes, "symbolic link's target", entry: name))
        case UInt8(ascii: "3"): kind = .characterDevice
        case UInt8(ascii: "4"): kind = .blockDevice
        case UInt8(ascii: "5"), UInt8(ascii: "D"): kind = .directory
        case UInt8(ascii: "6"): kind = .fifo
        case UInt8(ascii: "M"):
            throw .unsupported(archive: archive, entry: name, detail: "multi-volume archives are not supported")
        default:
            // POSIX says to read unknown types as regular files, and GNU tar does, with a
            // warning; an unattended tool should not guess.
            let shown = (0x21..<0x7F).contains(header.typeflag)
                ? "'\(Character(Unicode.Scalar(header.typeflag)))'" : "0x\(String(header.typeflag, radix: 16))"
            throw .unsupported(archive: archive, entry: name, detail: "unknown entry type \(shown)")
        }

        let payload: Int64
        switch kind {
        case .file:
            payload = size
        case .directory where header.typeflag == UInt8(ascii: "D"):
            // A GNU dumpdir's data lists the folder's contents, for incremental restores.
            payload = size
        case .hardLink where pax["size"] != nil:
            // POSIX.1-2001 lets a pax hard link carry data; older readers ignored the size field
            // of links (libarchive makes the same split). The data is skipped.
            payload = size
        default:
            // Links, folders, devices and FIFOs have no data; some writers still fill in a size,
            // which tar readers have always ignored (Python's tarfile, libarchive).
            payload = 0
        }

        let userName = pax["uname"] ?? globalPax["uname"] ?? header.uname
        let groupName = pax["gname"] ?? globalPax["gname"] ?? header.gname
        let entry = TarEntry(
            name: name,
            kind: kind,
            mode: UInt32(truncatingIfNeeded: header.mode & 0o7777),
            size: kind == .file ? size : 0,
            modificationTime: try number("mtime", header.mtime),
            userID: try number("uid", header.uid),
            groupID: try number("gid", header.gid),
            userName: String(decoding: userName, as: UTF8.self),
            groupName: String(decoding: groupName, as: UTF8.self))
        return (entry, payload)
    }

    /// The keywords a global header may set for every entry that follows: those that do not
    /// identify one entry. A global `path`, `linkpath` or `size` would give every entry the same
    /// name or length; GNU tar's own writer never emits them, so they are ignored with a note.
    private static let globalKeywords: Set<String> = ["mtime", "uid", "gid", "uname", "gname"]

    private func applyGlobal(_ records: PaxRecords) {
        for (key, value) in records.values.sorted(by: { $0.key < $1.key }) {
            if Self.globalKeywords.contains(key) {
                globalPax.values[key] = value
            } else if ["path", "linkpath", "size"].contains(key) || key.hasPrefix("GNU.sparse.") {
                addNote("a pax global header's \(key) is ignored: it would apply to every entry")
            }
            // Anything else (`comment`, which `git archive` uses for the commit id, `charset`,
            // vendor keywords) describes the archive, not its files.
        }
    }

    private func payloadDone() throws(ArchiveError) {
        switch sink {
        case .file, .discard:
            if let current { try handler.end(current) }
            current = nil
        case .extended(let type):
            let data = extended
            extended.removeAll(keepingCapacity: false)
            switch type {
            case UInt8(ascii: "x"), UInt8(ascii: "g"):
                let records: PaxRecords
                do {
                    records = try PaxRecords.parse(data)
                } catch {
                    throw .corrupt(archive: archive, entry: lastEntryName,
                                   detail: "\(Self.describe(type)) is malformed (after this entry)")
                }
                if type == UInt8(ascii: "g") {
                    applyGlobal(records)
                } else {
                    var merged = pendingPax ?? PaxRecords()
                    merged.merge(records)
                    pendingPax = merged
                }
            case UInt8(ascii: "L"):
                pendingLongName = Array(data.prefix { $0 != 0 })
            default:
                pendingLongLink = Array(data.prefix { $0 != 0 })
            }
        }
    }
}
