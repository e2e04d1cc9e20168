#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Whether the string's UTF-8 holds `byte`: `memchr` over the bytes in place. Every URL,
    /// header and message is asked this (for `$`, `@`, `=`), and walking `utf8` with its
    /// iterator cost several times as much.
    @inlinable
    public func containsByte(_ byte: UInt8) -> Bool {
        let found = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.isEmpty ? false : memchr(bytes.baseAddress!, Int32(byte), bytes.count) != nil
        }
        return found ?? utf8.contains(byte)
    }

    /// Whether the string holds a `${`: asked of every entry's paths (which are not expanded),
    /// so the byte search for `$` comes first.
    var holdsReference: Bool { containsByte(UInt8(ascii: "$")) && contains("${") }
}
