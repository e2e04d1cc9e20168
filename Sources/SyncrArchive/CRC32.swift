import CZlib

/// A running CRC-32 (the ZIP and gzip checksum), computed by zlib.
public struct CRC32: Sendable {
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Adds bytes to the checksum.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var remaining = bytes.count
        var pointer = base.assumingMemoryBound(to: UInt8.self)
        // zlib takes a uInt length: feed very large buffers in pieces.
        while remaining > 0 {
            let n = min(remaining, Int(UInt32.max >> 1))
            value = UInt32(crc32(UInt(value), pointer, UInt32(n)))
            pointer += n
            remaining -= n
        }
    }
}
