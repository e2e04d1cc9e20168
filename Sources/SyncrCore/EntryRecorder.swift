#if canImport(Glibc)
import Glibc
#endif
import SyncrHTTP

/// Owns one cache entry's record while it is being downloaded, so that the periodic checkpoint
/// and the download loop never interleave their writes.
///
/// The rule it enforces: bytes are flushed (`fdatasync`) before the record that counts them is
/// written, and the record is replaced atomically. A crash at any moment therefore leaves a
/// record that vouches only for bytes that are on disk.
actor EntryRecorder {
    /// How often progress is made durable while bytes flow: a crash loses at most this much
    /// transfer time. Each checkpoint costs one `fdatasync` and one small atomic write.
    static let interval: Duration = .milliseconds(500)

    private(set) var state: EntryState
    private let cache: Cache
    private let key: String
    private let fd: Int32
    private let redactor: Redactor
    private var adoptedHead = false
    /// Whether a `.state` file may be on disk for the key; while none is, the first unfinished
    /// record that needs no flush is written in place (`Cache.save(first:)`), and a complete
    /// one removes none.
    private var recordOnDisk: Bool

    /// - Parameter recordOnDisk: false when the caller knows the entry has no `.state` file.
    init(state: EntryState, cache: Cache, key: String, fd: Int32, redactor: Redactor, recordOnDisk: Bool = true) {
        self.state = state
        self.cache = cache
        self.key = key
        self.fd = fd
        self.redactor = redactor
        self.recordOnDisk = recordOnDisk
    }

    /// Starts over from byte 0: the record goes first, so it never vouches for bytes that are
    /// about to be overwritten.
    func reset() throws(FileError) {
        try cache.forgetRecord(key)
        recordOnDisk = false
        // Where the entry's earlier file or folder is stays known (`keepsForeignFiles`).
        let destination = state.destination
        state = EntryState(url: state.url)
        state.destination = destination
        adoptedHead = false
        if ftruncate(fd, 0) != 0 {
            throw FileError(path: cache.dataPath(key), operation: "truncate", errno: errno)
        }
    }

    /// Takes size and validators from the response that the bytes come from.
    func adopt(_ head: HTTPResponseHead) {
        guard !adoptedHead else { return }
        adoptedHead = true
        if head.status == 200 {
            state.etag = head.etag
            state.lastModified = head.lastModified
            state.size = head.contentLength
        } else {
            if state.size == nil { state.size = head.contentRange?.total }
            if state.etag == nil && state.lastModified == nil {
                // A fresh file's lead request (a range from byte 0): its 206 names the version.
                state.etag = head.etag
                state.lastModified = head.lastModified
            }
        }
        state.finalURL = redactor.scrubLocation(head.effectiveURL)
    }

    /// The file's size, learned elsewhere than from the answer that brings its bytes (which
    /// gave none); a size already known stays.
    func learn(size: Int64) {
        if state.size == nil { state.size = size }
    }

    /// Records ranges as durable, after flushing them; ranges already recorded cost nothing.
    func checkpoint(_ ranges: [Range<Int64>], head: HTTPResponseHead?) throws(FileError) {
        var next = state.ranges
        for r in ranges { next.insert(r) }
        guard next != state.ranges else { return }
        if let head { adopt(head) }
        if !cache.flush(fd) {
            throw FileError(path: cache.dataPath(key), operation: "flush", errno: errno)
        }
        for r in ranges { state.add(r) }
        try save(durable: true)
    }

    /// Records `good` bytes from offset 0 as durable, after flushing them.
    func checkpoint(good: Int64, head: HTTPResponseHead?) throws(FileError) {
        try checkpoint([0..<good], head: head)
    }

    /// - Parameter mayWait: a finished small file's record may wait for the next ones
    ///   (`Cache.save`).
    func update(durable: Bool = true, mayWait: Bool = false, _ change: (inout EntryState) -> Void) throws(FileError) {
        change(&state)
        try save(durable: durable, mayWait: mayWait)
    }

    private func save(durable: Bool, mayWait: Bool = false) throws(FileError) {
        let place = try cache.save(state, key: key, durable: durable, stateFile: recordOnDisk,
                                   first: !durable && !recordOnDisk, mayWait: mayWait)
        recordOnDisk = place == .stateFile
    }

    /// Counts bytes of a transfer that completed, in memory only: the finished file is flushed
    /// once, before it is moved into place, and needs no partial record on the way.
    func remember(_ range: Range<Int64>, head: HTTPResponseHead?) {
        if let head { adopt(head) }
        state.add(range)
    }
}
