import Foundation

/// Errors from the file helpers.
enum FileHelperError: Error, CustomStringConvertible {
    case cannotCreate(path: String)
    case sha256sumFailed(path: String, stderr: String)

    var description: String {
        switch self {
        case .cannotCreate(let path):
            return "\(path): cannot create file"
        case .sha256sumFailed(let path, let stderr):
            return "\(path): sha256sum failed: \(stderr)"
        }
    }
}

/// Writes `size` deterministic pseudo-random bytes to `path` (replacing any file there).
///
/// The same `seed` and `size` always give the same bytes, and a shorter file is a prefix
/// of a longer one with the same seed. One 1 MiB block is generated per seed and streamed
/// out repeatedly; each 4 KiB page starts with its own page number, so a chunk written at
/// the wrong offset (even a multiple of 1 MiB off) never matches the original.
/// - Parameters:
///   - path: the file to write; its folder must exist.
///   - size: the length in bytes.
///   - seed: selects the content.
@discardableResult
func makeFile(path: URL, size: Int, seed: UInt64 = 1) throws -> URL {
    let blockSize = 1 << 20, pageSize = 4096
    var block = [UInt8](repeating: 0, count: blockSize)
    var state = seed &+ 0x9E37_79B9_7F4A_7C15
    block.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for index in words.indices {
            // splitmix64: fast, and good enough to make every byte position distinct.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = (z ^ (z >> 31)).littleEndian
        }
    }
    guard FileManager.default.createFile(atPath: path.path, contents: nil) else {
        throw FileHelperError.cannotCreate(path: path.path)
    }
    let handle = try FileHandle(forWritingTo: path)
    defer { try? handle.close() }
    var written = 0, page: UInt64 = 0
    while written < size {
        let count = min(blockSize, size - written)
        block.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < blockSize {
                raw.storeBytes(of: (page ^ seed).littleEndian, toByteOffset: offset, as: UInt64.self)
                page += 1
                offset += pageSize
            }
        }
        try handle.write(contentsOf: block[0..<count])
        written += count
    }
    return path
}

/// The SHA-256 of a file as lowercase hex, computed by `sha256sum` (streams, any size).
func sha256(file: URL) async throws -> String {
    let result = try await runProcess(executable: "sha256sum", arguments: ["--", file.path])
    guard result.exitCode == 0, let digest = result.stdout.split(separator: " ").first else {
        throw FileHelperError.sha256sumFailed(path: file.path, stderr: result.stderr)
    }
    return String(digest)
}

/// A file opened for writing (created or truncated), closed when released.
final class OpenFile: Sendable {
    let path: String
    let fd: Int32

    init(_ path: String) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }
}
