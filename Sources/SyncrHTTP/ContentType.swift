/// Media types for uploaded files, chosen by file name extension.
///
/// A small fixed table rather than `/etc/mime.types`, so that a form's bytes (and so its length)
/// do not depend on the machine it was built on. Types are the IANA-registered ones where one
/// exists (`text/javascript` per RFC 9239, `application/gzip` per RFC 6713), else the `x-` type
/// that browsers and servers use.
public enum ContentType {
    /// The type for bytes of unknown kind (RFC 2046 §4.5.1).
    public static let octetStream = "application/octet-stream"

    /// Lowercased extension (without the dot) → media type.
    public static let byExtension: [String: String] = [
        "txt": "text/plain",
        "html": "text/html",
        "htm": "text/html",
        "css": "text/css",
        "js": "text/javascript",
        "json": "application/json",
        "xml": "application/xml",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "md": "text/markdown",
        "pdf": "application/pdf",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "svg": "image/svg+xml",
        "webp": "image/webp",
        "ico": "image/vnd.microsoft.icon",
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "zst": "application/zstd",
        "7z": "application/x-7z-compressed",
        "wasm": "application/wasm",
        "mp4": "video/mp4",
        "mp3": "audio/mpeg",
        "bin": octetStream,
    ]

    /// The media type for a file name or path, by its last extension (case-insensitive);
    /// `application/octet-stream` when there is none or it is not in the table.
    ///
    /// `archive.tar.gz` is `application/gzip`: the outermost encoding is what the bytes are.
    public static func forFilename(_ name: String) -> String {
        let base = name.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return octetStream }
        let ext = base[base.index(after: dot)...].lowercased()
        return byExtension[ext] ?? octetStream
    }
}
