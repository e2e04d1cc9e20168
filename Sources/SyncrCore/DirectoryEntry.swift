#if canImport(Glibc)
import Glibc
#endif

/// The name of a `readdir` entry, read in place.
///
/// Never `entry.pointee.d_name`: `pointee` copies the whole `dirent` (256 bytes of name), but the
/// kernel packs entries end to end with only as many name bytes as each needs, so the copy reads
/// past the end of glibc's buffer for the last entries (AddressSanitizer: heap-buffer-overflow).
func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
}
