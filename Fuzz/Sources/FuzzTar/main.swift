// Fuzz target: bytes -> TarReader (plain or gzip: ustar, pax, GNU long names, base-256 numbers)
// -> TarExtractor into a staging folder with small limits. A plain tar is also pushed through the
// streaming reader in pieces of different sizes, which must not change what it reads.
#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import SyncrArchive

runFuzzer(fuzz)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let work = Scratch.freshWork()
    let path = work + "/in.tar"
    Scratch.write(bytes, to: path)

    let stage = work + "/stage"
    guard mkdir(stage, 0o700) == 0 else { Scratch.fatal("mkdir \(stage)") }
    let limits = ExtractionLimits(maxEntries: FuzzLimits.maxEntries, maxTotalBytes: FuzzLimits.maxTotalBytes,
                                  maxRatio: FuzzLimits.maxRatio, ratioFloor: FuzzLimits.ratioFloor)
    let options = TarExtractionOptions(stripComponents: size > 0 ? Int(data[0] % 3) : 0, limits: limits,
                                       specialFiles: .skip, archiveName: "in.tar")
    do {
        _ = try TarExtractor.extract(archive: path, into: stage, options: options)
    } catch {
        _ = error.description
    }
    checkConfinement(work: work, input: "in.tar")

    // Streaming: one piece, then pieces of a size taken from the input.
    if size < 2 || !(data[0] == 0x1F && data[1] == 0x8B) {
        let whole = stream(bytes, pieceSize: max(size, 1))
        let pieceSize = size > 1 ? 1 + Int(data[size - 1]) * 3 : 1
        let pieces = stream(bytes, pieceSize: pieceSize)
        invariant(whole == pieces, "reading in pieces of \(pieceSize) differs:\n\(whole)\n---\n\(pieces)")
        let bytewise = stream(bytes, pieceSize: 1)
        invariant(whole == bytewise, "reading byte by byte differs:\n\(whole)\n---\n\(bytewise)")
    }
    return 0
}

/// What the reader reported, as text.
private final class Recorder: TarEntryHandler {
    var log: [String] = []
    var dataBytes: Int64 = 0
    func begin(_ entry: TarEntry) throws(ArchiveError) {
        log.append("begin \(entry.name) \(entry.kind) mode=\(entry.mode) size=\(entry.size) mtime=\(entry.modificationTime) \(entry.userID)/\(entry.groupID) \(entry.userName)/\(entry.groupName)")
        dataBytes = 0
    }
    func data(_ bytes: UnsafeRawBufferPointer, of entry: TarEntry) throws(ArchiveError) {
        dataBytes += Int64(bytes.count)
        invariant(dataBytes <= entry.size, "more data than the entry's size \(entry.size)")
    }
    func end(_ entry: TarEntry) throws(ArchiveError) {
        log.append("end \(entry.name) \(dataBytes)")
    }
}

private func stream(_ bytes: UnsafeRawBufferPointer, pieceSize: Int) -> String {
    let recorder = Recorder()
    let reader = TarReader(archive: "in.tar", handler: recorder)
    do {
        var position = 0
        while position < bytes.count && !reader.isAtEnd {
            let end = min(position + pieceSize, bytes.count)
            try reader.consume(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
            position = end
        }
        try reader.finish()
        recorder.log.append("finished, notes: \(reader.notes)")
    } catch {
        recorder.log.append("error: \(error)")
    }
    return recorder.log.joined(separator: "\n")
}
