#if canImport(Glibc)
import Glibc
#endif

/// A `multipart/form-data` body (RFC 7578), as an HTML form in a browser would send it.
///
/// Written here rather than with `curl_mime_*` so that its bytes are ours to test with a fixed
/// boundary. A form is a list of parts with known lengths (file sizes are taken when a part is
/// made), so the exact `Content-Length` is known before anything is sent and nothing is staged:
/// the engine streams the file parts from disk between the header bytes.
///
/// Layout (CRLF line ends, RFC 7578 §4.1 and RFC 2046 §5.1.1):
///
///     --BOUNDARY
///     Content-Disposition: form-data; name="NAME"
///
///     VALUE
///     --BOUNDARY
///     Content-Disposition: form-data; name="NAME"; filename="FILENAME"
///     Content-Type: TYPE
///
///     <file bytes>
///     --BOUNDARY--
public struct MultipartForm: Sendable, Equatable {
    /// One entry of the form.
    public enum Part: Sendable, Equatable {
        /// A text field; the value is sent as UTF-8, unchanged.
        case field(name: String, value: String)
        /// A file; `size` is its length when the part was made and must still be its length
        /// when the form is sent (the transfer fails otherwise).
        case file(name: String, filename: String, path: String, contentType: String, size: Int64)

        /// A file part for the file at `path`, measured now.
        /// - Parameters:
        ///   - filename: the name the server is told (default: the last component of `path`).
        ///   - contentType: the part's media type (default: from the filename's extension).
        /// - Throws: `.local` when `path` is not a readable regular file.
        public static func file(name: String, path: String, filename: String? = nil,
                                contentType: String? = nil) throws(TransferError) -> Part {
            let st: stat
            switch BodyReader.statFile(path) {
            case .success(let s): st = s
            case .failure(let error): throw error
            }
            let shown = filename ?? String(path.split(separator: "/").last ?? Substring(path))
            return .file(name: name, filename: shown, path: path,
                         contentType: contentType ?? ContentType.forFilename(shown), size: Int64(st.st_size))
        }
    }

    /// The parts, in the order they are sent.
    public let parts: [Part]
    /// The boundary between parts (without the leading `--`).
    public let boundary: String
    /// The body's exact length in bytes.
    public let length: Int64
    /// The body cut into header bytes and files.
    let segments: [BodySegment]

    /// The request's `Content-Type` header value.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Builds a form.
    ///
    /// - Parameters:
    ///   - boundary: for tests; used unless it is not a valid RFC 2046 boundary or occurs in a
    ///     name, value, filename or content type of the form, in which case a random one is
    ///     chosen as when it is nil.
    ///
    /// The boundary is never looked for in the files' contents: that would mean reading every
    /// file twice. A random boundary of 32 alphanumerics (about 190 bits) makes a collision
    /// (the file containing CRLF, `--` and the boundary) as likely as guessing a 190-bit key,
    /// which is how browsers and curl's own MIME code work too.
    public init(parts: [Part], boundary: String? = nil) {
        let texts = parts.flatMap { part -> [String] in
            switch part {
            case .field(let name, let value): return [name, value]
            case .file(let name, let filename, _, let contentType, _): return [name, filename, contentType]
            }
        }
        var chosen = boundary ?? Self.randomBoundary()
        while !Self.isValidBoundary(chosen) || texts.contains(where: { $0.contains(chosen) }) {
            chosen = Self.randomBoundary()
        }
        self.parts = parts
        self.boundary = chosen
        segments = Self.segments(parts: parts, boundary: chosen)
        length = segments.reduce(0) { $0 + $1.length }
    }

    /// `----syncr` followed by 32 random letters and digits.
    public static func randomBoundary() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return "----syncr" + String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// RFC 2046 §5.1.1: 1 to 70 characters from `bchars`, not ending in a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'()+_,-./:=? ")
        return (1...70).contains(boundary.count) && boundary.allSatisfy(allowed.contains) && boundary.last != " "
    }

    /// Escapes a name or filename for a quoted `Content-Disposition` parameter the way browsers do
    /// (WHATWG HTML, "multipart/form-data encoding algorithm", which RFC 7578 §4.2 defers to):
    /// `"` becomes `%22`, CR `%0D` and LF `%0A`. Everything else, non-ASCII included, is sent as
    /// UTF-8 as is; a backslash is not escaped, as no browser escapes it and servers that follow
    /// the HTML spec do not unescape it.
    public static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A header value made safe to send: control characters (CR and LF above all, which would
    /// end the header) become spaces.
    static func headerSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f ? " " : $0
        }))
    }

    private static func segments(parts: [Part], boundary: String) -> [BodySegment] {
        var segments: [BodySegment] = []
        var pending: [UInt8] = []
        func text(_ s: String) { pending.append(contentsOf: Array(s.utf8)) }
        for part in parts {
            text("--\(boundary)\r\n")
            switch part {
            case .field(let name, let value):
                text("Content-Disposition: form-data; name=\"\(escape(name))\"\r\n\r\n")
                text(value)
            case .file(let name, let filename, let path, let contentType, let size):
                text("Content-Disposition: form-data; name=\"\(escape(name))\"; filename=\"\(escape(filename))\"\r\n")
                text("Content-Type: \(headerSafe(contentType))\r\n\r\n")
                // Kept when empty too, so that the file is still checked when the form is sent.
                segments.append(.bytes(pending))
                pending = []
                segments.append(.file(path: path, size: size))
            }
            text("\r\n")
        }
        text("--\(boundary)--\r\n")
        segments.append(.bytes(pending))
        return segments
    }
}
