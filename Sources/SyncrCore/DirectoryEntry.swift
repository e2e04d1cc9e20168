#if canImport(Glibc)
import Glibc
#endif

/// The name of a `readdir` entry, read in place.
///
/// Never `entry.pointee.d_name`: `pointee` copies the whole `dirent` (256 bytes of name), but the
/// kernel packs entries end to end with only as many name bytes as each needs, so the copy reads
/// past the end of glibc's buffer for the last entries (AddressSanitizer: heap-buffer-overflow).
func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    String(cString: namePointer(entry))
}

/// Where a `readdir` entry's name starts, NUL-terminated.
private func namePointer(_ entry: UnsafeMutablePointer<dirent>) -> UnsafePointer<CChar> {
    let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    return UnsafePointer((UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
}

/// The name of a `readdir` entry, or nil when it is not valid UTF-8 (a file made on a system with
/// another encoding): `directoryEntryName` would repair it, and the repaired name names no file.
func validDirectoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String? {
    String(validatingCString: namePointer(entry))
}

/// The bytes of a `readdir` entry's name for a message: ASCII as it is, every other byte as
/// `\xNN`, so that a name that is not UTF-8 can be found and renamed.
func directoryEntryBytesShown(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let name = UnsafeRawPointer(namePointer(entry)).assumingMemoryBound(to: UInt8.self)
    var shown = ""
    var i = 0
    while name[i] != 0 {
        let byte = name[i]
        if byte >= 0x20 && byte < 0x7F {
            shown.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            shown += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }
        i += 1
    }
    return shown
}
