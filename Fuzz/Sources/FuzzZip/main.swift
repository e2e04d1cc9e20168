// Fuzz target: bytes -> ZipReader (end records, ZIP64, central directory, local headers) ->
// reading every entry -> ZipExtractor into a staging folder with small limits.
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
    let path = work + "/in.zip"
    Scratch.write(bytes, to: path)

    // Listing and reading each entry on its own, with a bound on what is kept.
    if let reader = try? ZipReader(path: path, archiveName: "in.zip") {
        var total: Int64 = 0
        for entry in reader.entries.prefix(FuzzLimits.maxEntries) {
            _ = try? reader.contents(of: entry, limit: 4096)
            do {
                try reader.read(entry) { (piece: UnsafeRawBufferPointer) throws(ArchiveError) in
                    total += Int64(piece.count)
                    if total > FuzzLimits.maxTotalBytes {
                        throw ArchiveError.limit(archive: "in.zip", entry: nil, detail: "fuzz bound")
                    }
                }
            } catch {
                _ = error.description
            }
        }
    }

    // Extraction.
    let stage = work + "/stage"
    guard mkdir(stage, 0o700) == 0 else { Scratch.fatal("mkdir \(stage)") }
    let limits = ExtractionLimits(maxEntries: FuzzLimits.maxEntries, maxTotalBytes: FuzzLimits.maxTotalBytes,
                                  maxRatio: FuzzLimits.maxRatio, ratioFloor: FuzzLimits.ratioFloor)
    do {
        _ = try ZipExtractor.extract(archiveAt: path, into: stage, archiveName: "in.zip",
                                     stripComponents: size > 0 ? Int(data[0] % 3) : 0, limits: limits)
    } catch {
        _ = error.description
    }
    checkConfinement(work: work, input: "in.zip")
    return 0
}
