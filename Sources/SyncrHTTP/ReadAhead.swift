#if canImport(Glibc)
import Glibc
#endif
import SyncrLock

/// What `ReadAhead.read` gave curl.
enum ReadAdmission: Equatable {
    /// This many bytes (0: the body is complete).
    case bytes(Int)
    /// Nothing read yet: the engine pauses the transfer until the resume handler is called.
    case pause
    /// Reading failed (`failure` says why); the transfer must be aborted.
    case fail
}

/// Reads a request body ahead of curl on a `DiskWriter` thread, so that the engine thread never
/// waits on a disk: a body on a slow disk (a network mount, a throttled volume) pauses its own
/// transfer while every other request goes on. The mirror of `WriteBehind`.
///
/// At most `buffers` buffers of `bufferSize` per transfer, read in body order, one read in
/// flight at a time. curl's read callback copies from the buffers read; when none is ready it
/// answers `.pause`, and the reader calls the resume handler once one is. The first buffer is
/// read by `prime`, on the thread of the task that submits the transfer: a small body (one
/// buffer) then costs no hand-off to a disk thread and back.
///
/// `BodyReader` is touched by one thread at a time: whoever claimed `reading` (a disk thread,
/// or `prime` before the transfer is submitted). A rewind (`seek`) drops what was read ahead;
/// a read in flight across it is thrown away when it lands.
final class ReadAhead: @unchecked Sendable {
    // @unchecked: `reader` is touched only by the thread that claimed `reading` (see above);
    // everything else is under `state`'s lock.
    static let bufferSize = 256 * 1024
    static let buffers = 2

    private struct Chunk {
        var buffer: UnsafeMutableRawBufferPointer
        var count: Int
        /// Bytes of it already given to curl.
        var taken = 0
    }

    private struct State {
        /// Buffers read, in body order; the first one's untaken bytes come next.
        var ready: [Chunk] = []
        var spare: [UnsafeMutableRawBufferPointer] = []
        var allocated = 0
        /// The body offset the next read starts at.
        var next: Int64 = 0
        /// The body offset of the next byte given to curl.
        var position: Int64 = 0
        /// Bytes given to curl, across rewinds.
        var delivered: Int64 = 0
        /// Bumped by every rewind: a read that began before one is not used.
        var generation = 0
        /// Someone (a disk thread, or `prime`) is reading.
        var reading = false
        /// `read` answered `.pause`: resume the transfer once a buffer is ready or reading failed.
        var paused = false
        var failure: TransferError?
        var closed = false
        var resume: (@Sendable () -> Void)?

        var hasRoom: Bool { !spare.isEmpty || allocated < ReadAhead.buffers }
    }

    /// The body's total length: the request's `Content-Length`.
    let length: Int64
    /// The body's file (or `a form of N files`), for messages.
    let path: String
    private let bufferSize: Int
    private let reader: BodyReader
    private let disk: DiskWriter
    private let state = Locked(State())

    /// - Parameter bufferSize: `ReadAhead.bufferSize`; a test makes it tiny, so that a body
    ///   goes through many more hand-offs than its size would need.
    init(_ reader: BodyReader, path: String, disk: DiskWriter, bufferSize: Int = ReadAhead.bufferSize) {
        self.reader = reader
        self.path = path
        self.disk = disk
        self.bufferSize = bufferSize
        length = reader.length
    }

    deinit {
        state.withLock { s in
            s.ready.forEach { Self.unmap($0.buffer) }
            s.spare.forEach { Self.unmap($0) }
        }
    }

    /// A buffer of its own pages, not from malloc: buffers are taken on one thread (the
    /// submitting task's, a disk thread) and let go on another, and glibc's per-thread arenas
    /// then kept their peak each (a 1 GiB multipart upload, 8 parts at a time: 56 MiB peak RSS
    /// against 44 MiB with these, the 8 x 512 KiB above reading on the engine thread). Unmapped,
    /// they are gone at once.
    private static func map(_ size: Int) -> UnsafeMutableRawBufferPointer {
        let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { fatalError("out of memory: cannot map \(size) bytes") }
        return UnsafeMutableRawBufferPointer(start: address, count: size)
    }

    private static func unmap(_ buffer: UnsafeMutableRawBufferPointer) {
        munmap(buffer.baseAddress, buffer.count)
    }

    /// The body offset of the next byte given to curl.
    var position: Int64 { state.withLock { $0.position } }
    /// Bytes given to curl so far, across rewinds (so > 0 means part of the body may be out).
    var delivered: Int64 { state.withLock { $0.delivered } }
    /// Why reading stopped, once it did.
    var failure: TransferError? { state.withLock { $0.failure } }
    /// curl waits for bytes that a read still in flight has not brought: the disk, not the
    /// server, holds the upload up. libcurl's low-speed timeout counts such a pause (it exempts
    /// only paused receiving), so a read stuck that long ends the transfer as too slow.
    var waitingOnDisk: Bool { state.withLock { $0.paused && $0.reading } }

    /// How the transfer is resumed after `.pause`; set before the transfer starts.
    func onResume(_ resume: @escaping @Sendable () -> Void) {
        state.withLock { $0.resume = resume }
    }

    /// Reads the first buffer on the calling thread, before the transfer is submitted.
    func prime() {
        guard state.withLock({ claimReading(&$0) }) else { return }
        readOnce(continuing: false)
    }

    // MARK: the engine thread

    /// Copies the next bytes of the body into curl's buffer, or answers `.pause` when none
    /// has been read yet.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadAdmission {
        let (admission, start) = state.withLock { s -> (ReadAdmission, Bool) in
            if s.failure != nil { return (.fail, false) }
            if s.ready.isEmpty {
                if s.position >= length { return (.bytes(0), false) }
                s.paused = true
                return (.pause, claimReading(&s))
            }
            let n = Self.take(into: buffer, from: &s)
            return (.bytes(n), claimReading(&s))
        }
        if start { disk.submit { [self] in readOnce(continuing: true) } }
        return admission
    }

    /// Moves to `offset` in the body (curl rewinds to 0 before sending it again on a new
    /// connection: a reused one that had died, a refused HTTP/2 stream): what was read ahead is
    /// dropped and read again from there.
    func seek(to offset: Int64) -> Bool {
        let (ok, start) = state.withLock { s -> (Bool, Bool) in
            guard s.failure == nil, !s.closed, offset >= 0, offset <= length else { return (false, false) }
            s.generation += 1
            // curl starts the request over, unpaused: a resume now could reach a transfer still
            // waiting for its connection. The next `read` pauses it again if need be.
            s.paused = false
            while !s.ready.isEmpty { s.spare.append(s.ready.removeFirst().buffer) }
            s.next = offset
            s.position = offset
            return (true, claimReading(&s))
        }
        if start { disk.submit { [self] in readOnce(continuing: true) } }
        return ok
    }

    /// The transfer is over: the body's file is closed now, or by the reader when its read in
    /// flight lands. Nothing resumes the transfer any more.
    func close() {
        let now = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.closed = true
            // The handler holds the transfer, which holds this: let the cycle go.
            s.resume = nil
            // Nothing more is read or taken: the buffers go now (one being read into, later).
            s.ready.forEach { Self.unmap($0.buffer) }
            s.spare.forEach { Self.unmap($0) }
            s.ready = []
            s.spare = []
            return !s.reading
        }
        if now { reader.close() }
    }

    // MARK: reading (whoever claimed `reading`)

    /// Reads buffers until there is no room, the body is read, or reading failed or was
    /// closed; then gives up `reading`. `continuing: false` reads one buffer only (`prime`).
    private func readOnce(continuing: Bool) {
        var more = true
        while true {
            // Taking the next buffer and giving up `reading` are one look at the state: room
            // that `read` made between two looks (emptying both buffers, then pausing) would
            // find nobody reading, and the transfer would wait for a resume that never comes.
            let step = state.withLock { s -> ReadStep in
                if more, let job = takeJob(&s) { return .read(job) }
                s.reading = false
                return .stop(closeNow: s.closed, resume: Self.unpause(&s))
            }
            switch step {
            case .stop(let closeNow, let resume):
                resume?()
                if closeNow { reader.close() }
                return
            case .read(let job):
                land(job, read(job))?()
                more = continuing
            }
        }
    }

    private enum ReadStep {
        case read(Job)
        case stop(closeNow: Bool, resume: (@Sendable () -> Void)?)
    }

    private struct Job {
        var buffer: UnsafeMutableRawBufferPointer
        var at: Int64
        var generation: Int
    }

    /// A buffer to fill from `next`, when there is room and more to read.
    private func takeJob(_ s: inout State) -> Job? {
        guard !s.closed, s.failure == nil, s.next < length, s.hasRoom else { return nil }
        let buffer: UnsafeMutableRawBufferPointer
        if let spare = s.spare.popLast() {
            buffer = spare
        } else {
            s.allocated += 1
            buffer = Self.map(bufferSize)
        }
        return Job(buffer: buffer, at: s.next, generation: s.generation)
    }

    /// Reads the job's bytes (nil: reading failed).
    private func read(_ job: Job) -> Int? {
        let count = Int(min(Int64(bufferSize), length - job.at))
        disk.beforeRead?(count)
        guard reader.seek(to: job.at) else { return nil }
        return reader.read(into: UnsafeMutableRawBufferPointer(rebasing: job.buffer[..<count]))
    }

    /// Hands what was read to `read` (unless a rewind made it stale); returns the resume
    /// handler when the transfer waits for it.
    private func land(_ job: Job, _ n: Int?) -> (@Sendable () -> Void)? {
        state.withLock { s in
            if job.generation != s.generation {
                s.spare.append(job.buffer)
            } else if let n, n > 0 {
                s.ready.append(Chunk(buffer: job.buffer, count: n))
                s.next = job.at + Int64(n)
            } else {
                s.spare.append(job.buffer)
                s.failure = reader.failure ?? .local(path: path, errno: EIO,
                                                     message: "ended after \(job.at) of its \(length) bytes")
            }
            return Self.unpause(&s)
        }
    }

    // MARK: the state, under the lock

    /// Whether the caller must start reading: there is room, more to read, and nobody reads.
    private func claimReading(_ s: inout State) -> Bool {
        guard !s.reading, !s.closed, s.failure == nil, s.next < length, s.hasRoom else { return false }
        s.reading = true
        return true
    }

    private static func take(into buffer: UnsafeMutableRawBufferPointer, from s: inout State) -> Int {
        var filled = 0
        while filled < buffer.count, !s.ready.isEmpty {
            let chunk = s.ready[0]
            let n = min(buffer.count - filled, chunk.count - chunk.taken)
            (buffer.baseAddress! + filled).copyMemory(from: chunk.buffer.baseAddress! + chunk.taken, byteCount: n)
            filled += n
            if chunk.taken + n == chunk.count {
                s.spare.append(s.ready.removeFirst().buffer)
            } else {
                s.ready[0].taken += n
            }
        }
        s.position += Int64(filled)
        s.delivered += Int64(filled)
        return filled
    }

    /// The resume handler, if the transfer waits for bytes that are now there (or for the
    /// failure it must be told of).
    private static func unpause(_ s: inout State) -> (@Sendable () -> Void)? {
        guard s.paused, s.failure != nil || !s.ready.isEmpty else { return nil }
        s.paused = false
        return s.resume
    }
}
