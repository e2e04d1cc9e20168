/// One 512-byte tar header block, as POSIX ustar (IEEE 1003.1-1988, kept in pax, 1003.1-2001)
/// and GNU tar (`src/tar.h`) lay it out. Field names and offsets are the standard's.
///
/// Text fields are kept as bytes: a name is decoded (and checked to be UTF-8) only once every
/// override — pax `path`, GNU long name, ustar `prefix` — has been applied.
struct TarHeader {
    static let blockSize = 512

    /// Which variant of the header: it decides whether bytes 345..<500 hold a name prefix.
    enum Format: Equatable {
        /// POSIX ustar or pax: magic `ustar\0`, version `00`.
        case ustar
        /// GNU tar's own format: magic `ustar ` and version ` \0`. Bytes 345..<500 hold access and
        /// change times and sparse data, never a name prefix.
        case gnu
    }

    /// Why a block is not a header syncr can read.
    enum Problem: Error, Equatable {
        case checksum(stored: Int64?, unsigned: Int64, signed: Int64)
        case magic([UInt8])
        case field(String)
    }

    var name: [UInt8]
    var mode: Int64
    var uid: Int64
    var gid: Int64
    var size: Int64
    var mtime: Int64
    var typeflag: UInt8
    var linkname: [UInt8]
    var format: Format
    var uname: [UInt8]
    var gname: [UInt8]
    var prefix: [UInt8]

    /// `prefix/name` for ustar; `name` alone for GNU.
    var path: [UInt8] {
        prefix.isEmpty ? name : prefix + [UInt8(ascii: "/")] + name
    }

    /// Whether the block is all zeros: two of them end an archive.
    static func isZeroBlock(_ block: UnsafeRawBufferPointer) -> Bool {
        block.allSatisfy { $0 == 0 }
    }

    /// The name field, best effort, for a message about a block that failed to parse.
    static func rawName(_ block: UnsafeRawBufferPointer) -> String? {
        let bytes = text(block, 0, 100)
        guard !bytes.isEmpty, let name = String(validating: bytes, as: UTF8.self),
              name.allSatisfy({ !$0.isASCII || $0.asciiValue! >= 0x20 }) else { return nil }
        return name
    }

    /// Parses and verifies a header block (512 bytes, not all zeros).
    static func parse(_ block: UnsafeRawBufferPointer) throws(Problem) -> TarHeader {
        precondition(block.count == blockSize)
        // The checksum is the sum of the header's bytes with its own field read as eight spaces.
        // POSIX says unsigned; some old tars (Sun, early GNU) summed signed chars, and GNU tar
        // accepts either (list.c, tar_checksum), so do we.
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (index, byte) in block.enumerated() {
            let value: UInt8 = (148..<156).contains(index) ? 0x20 : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        let stored = octal(block, 148, 8)
        guard let stored, stored == unsigned || stored == signed else {
            throw .checksum(stored: stored, unsigned: unsigned, signed: signed)
        }

        let magic = Array(block[257..<263])
        let format: Format
        if magic == Array("ustar\0".utf8) {
            format = .ustar
        } else if magic == Array("ustar ".utf8) {
            format = .gnu
        } else {
            throw .magic(magic)
        }

        func number(_ field: String, _ offset: Int, _ length: Int) throws(Problem) -> Int64 {
            guard let value = Self.number(block, offset, length) else { throw .field(field) }
            return value
        }
        return TarHeader(
            name: text(block, 0, 100),
            mode: try number("mode", 100, 8),
            uid: try number("uid", 108, 8),
            gid: try number("gid", 116, 8),
            size: try number("size", 124, 12),
            mtime: try number("mtime", 136, 12),
            typeflag: block[156],
            linkname: text(block, 157, 100),
            format: format,
            uname: text(block, 265, 32),
            gname: text(block, 297, 32),
            prefix: format == .ustar ? text(block, 345, 155) : [])
    }

    /// A text field: its bytes up to the first NUL (a field that fills its width has none).
    static func text(_ block: UnsafeRawBufferPointer, _ offset: Int, _ length: Int) -> [UInt8] {
        let field = block[offset..<(offset + length)]
        return Array(field.prefix { $0 != 0 })
    }

    /// A numeric field: octal digits, or GNU's base-256 (first byte 0x80 for a positive number,
    /// 0xff for a negative one; the rest is big-endian two's complement), which GNU tar and
    /// Python's tarfile write for values too large for octal. Nil when it is neither or does not
    /// fit in 64 bits.
    static func number(_ block: UnsafeRawBufferPointer, _ offset: Int, _ length: Int) -> Int64? {
        let first = block[offset]
        if first == 0x80 || first == 0xFF {
            var value: Int64 = first == 0xFF ? -1 : 0
            for byte in block[(offset + 1)..<(offset + length)] {
                // The value must still fit once shifted left by 8 bits.
                guard value <= Int64.max >> 8, value >= Int64.min >> 8 else { return nil }
                value = (value << 8) | Int64(byte)
            }
            return value
        }
        return octal(block, offset, length)
    }

    /// Octal digits after optional spaces, ended by a space, a NUL or the field's end (what
    /// follows that is not read, as in GNU tar's `from_header`). An empty field is 0, as GNU tar
    /// and Python's tarfile read it.
    static func octal(_ block: UnsafeRawBufferPointer, _ offset: Int, _ length: Int) -> Int64? {
        var index = offset
        let end = offset + length
        while index < end, block[index] == 0x20 { index += 1 }
        var value: Int64 = 0
        while index < end, (0x30...0x37).contains(block[index]) {
            // At most 12 digits: 36 bits, no overflow.
            value = value * 8 + Int64(block[index] - 0x30)
            index += 1
        }
        return index == end || block[index] == 0x20 || block[index] == 0 ? value : nil
    }
}
