#if canImport(Glibc)
import Glibc
#endif

/// Limits small enough that one input never writes more than a few MiB.
public enum FuzzLimits {
    public static let maxEntries = 64
    public static let maxTotalBytes: Int64 = 4 << 20
    public static let maxRatio: Int64 = 1000
    public static let ratioFloor: Int64 = 64 << 10
}

/// Checks that an unpack left nothing outside `<work>/stage` but the input file, and that
/// nothing inside it is bigger than the limits allow.
public func checkConfinement(work: String, input: String) {
    let names = Scratch.names(in: work)
    invariant(names == [input, "stage"].sorted(), "something was written outside the staging folder: \(names)")
    var total: Int64 = 0
    var entries = 0
    walk(work + "/stage", total: &total, entries: &entries)
    invariant(total <= FuzzLimits.maxTotalBytes, "unpacked \(total) bytes, over the limit")
    invariant(entries <= FuzzLimits.maxEntries + 64, "unpacked \(entries) entries, over the limit")
}

private func walk(_ path: String, total: inout Int64, entries: inout Int) {
    for name in Scratch.names(in: path) {
        let child = path + "/" + name
        var st = stat()
        guard lstat(child, &st) == 0 else { continue }
        entries += 1
        switch st.st_mode & S_IFMT {
        case S_IFDIR: walk(child, total: &total, entries: &entries)
        case S_IFREG: total += Int64(st.st_size)
        case S_IFLNK: break
        default: invariant(false, "a special file was created: \(child)")
        }
    }
}
