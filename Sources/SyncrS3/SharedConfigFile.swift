#if canImport(Glibc)
import Glibc
#endif

/// An AWS shared file (`~/.aws/credentials` or `~/.aws/config`) read as the AWS CLI reads it:
/// `[section]` headers, `key = value` lines, `#` and `;` comments. Indented lines (the
/// sub-settings of `s3 =`) are skipped.
struct SharedConfigFile {
    let path: String
    /// Section name -> key -> value, keys lower-cased.
    private(set) var sections: [String: [String: String]] = [:]

    /// Reads `path`; nil when there is no such file.
    /// - Throws: `S3ConfigError.unreadable` when it exists but cannot be read.
    init?(path: String) throws(S3ConfigError) {
        self.path = path
        guard let text = try Self.read(path) else { return nil }
        var current: String?
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            if raw.first == " " || raw.first == "\t" { continue }
            let line = raw.trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: " \t")
                continue
            }
            guard let current, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: " \t").lowercased()
            let value = line[line.index(after: eq)...].trimmingCharacters(in: " \t")
            sections[current, default: [:]][key] = value
        }
    }

    /// The whole file, nil when missing. Small files only: these hold a few keys.
    private static func read(_ path: String) throws(S3ConfigError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        var s = Substring(self).unicodeScalars
        while let f = s.first, scalars.contains(f) { s.removeFirst() }
        while let l = s.last, scalars.contains(l) { s.removeLast() }
        return String(s)
    }
}
