import CZlib

/// zlib's inflate, for raw deflate data (zip entries) or gzip streams (tar.gz), fed in pieces.
///
/// Owns one `z_stream`; not thread-safe. Output goes to a fixed buffer handed to a closure, so
/// memory stays the same whatever the size of the data.
public final class Inflater {
    public enum Format: Sendable {
        /// Raw deflate, as zip stores it.
        case raw
        /// A gzip member (header, deflate data, CRC-32 and size trailer).
        case gzip

        var windowBits: Int32 { self == .raw ? -15 : 31 }
    }

    private var stream = z_stream()
    private let output: UnsafeMutableRawBufferPointer
    /// The end of the compressed stream was reached.
    public private(set) var finished = false
    /// Compressed bytes consumed so far.
    public var totalIn: Int64 { Int64(stream.total_in) }
    /// Uncompressed bytes produced so far.
    public var totalOut: Int64 { Int64(stream.total_out) }

    public init(_ format: Format, bufferSize: Int = 256 * 1024) throws(ZlibError) {
        output = .allocate(byteCount: bufferSize, alignment: 64)
        let code = syncr_inflateInit2(&stream, format.windowBits)
        guard code == Z_OK else {
            output.deallocate()
            throw ZlibError(code: code, message: "inflateInit2 failed")
        }
    }

    deinit {
        inflateEnd(&stream)
        output.deallocate()
    }

    /// Inflates `input`, handing every produced piece to `sink`. Returns how many input bytes
    /// were used: fewer than given only when the stream ended inside `input`.
    @discardableResult
    public func feed(_ input: UnsafeRawBufferPointer,
                     _ sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        guard !finished, let base = input.baseAddress, input.count > 0 else { return 0 }
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        repeat {
            stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let code = inflate(&stream, Z_NO_FLUSH)
            let produced = output.count - Int(stream.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if code == Z_STREAM_END {
                finished = true
                break
            }
            guard code == Z_OK || (code == Z_BUF_ERROR && stream.avail_in == 0) else {
                throw ZlibError(code: code, message: stream.msg.map { String(cString: $0) } ?? "inflate failed")
            }
        } while stream.avail_in > 0 || stream.avail_out == 0
        let used = input.count - Int(stream.avail_in)
        stream.next_in = nil
        stream.avail_in = 0
        return used
    }

    /// Starts over for the next gzip member (concatenated gzip files are one stream).
    public func reset() {
        inflateReset(&stream)
        finished = false
    }
}

/// A zlib failure.
public struct ZlibError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { "zlib error \(code): \(message)" }
}
