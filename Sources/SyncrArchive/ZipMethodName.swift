/// The compression methods of the ZIP APPNOTE (section 4.4.5) by name, so that a refusal says
/// which method an entry uses and what to do about it: "method 14" alone sent users to look
/// the number up.
enum ZipMethodName {
    /// The methods syncr unpacks: stored and deflate.
    static func isReadable(_ method: UInt16) -> Bool { method == 0 || method == 8 }

    /// APPNOTE's name for `method`, nil for a number it does not assign.
    static func name(_ method: UInt16) -> String? {
        switch method {
        case 0: "stored"
        case 1: "Shrink"
        case 2...5: "Reduce with compression factor \(method - 1)"
        case 6: "Implode"
        case 7: "Tokenizing"
        case 8: "deflate"
        case 9: "Deflate64"
        case 10: "PKWARE DCL Implode"
        case 12: "bzip2"
        case 14: "LZMA"
        case 16: "IBM z/OS CMPSC"
        case 18: "IBM TERSE"
        case 19: "IBM LZ77 z"
        case 20: "Zstandard, under its withdrawn number"
        case 93: "Zstandard"
        case 94: "MP3"
        case 95: "XZ"
        case 96: "JPEG variant"
        case 97: "WavPack"
        case 98: "PPMd"
        case 99: "AES encryption"
        default: nil
        }
    }

    /// `method 14 (LZMA)`, or `method 57` for a number APPNOTE does not assign.
    static func text(_ method: UInt16) -> String {
        name(method).map { "method \(method) (\($0))" } ?? "method \(method)"
    }

    /// Why an entry of `method` cannot be unpacked, and how to make an archive that can.
    /// - Parameter localHeader: the method was read from the entry's local header (which
    ///   disagrees with the central directory), not from the central directory.
    static func refusal(_ method: UInt16, localHeader: Bool = false) -> String {
        // 99 marks an entry encrypted with WinZip's AES: its real method is inside the
        // encryption header, and no other tool's method would unpack it either.
        let remedy = method == 99
            ? "re-create the archive without encryption, with deflate or stored"
            : "re-create the archive with deflate or stored (zip -Z deflate; 7-Zip: -mm=Deflate)"
        return (localHeader ? "its local header says it is compressed" : "compressed") + " with \(text(method)), which syncr does not unpack "
            + "(it reads stored and deflate entries); \(remedy)"
    }
}
