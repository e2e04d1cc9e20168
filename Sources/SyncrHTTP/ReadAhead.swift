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
    /// The body's file (or "multipart form"), for messages.
    let path: String
    private let reader: BodyReader
    private let disk: DiskWriter
    private let state = Locked(State())

    init(_ reader: BodyReader, path: String, disk: DiskWriter) {
        self.reader = reader
        self.path = path
        self.disk = disk
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
    private static func map() -> UnsafeMutableRawBufferPointer {
        let address = mmap(nil, bufferSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { fatalError("out of memory: cannot map \(bufferSize) bytes") }
        return UnsafeMutableRawBufferPointer(start: address, count: bufferSize)
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
        while true {
            let job = state.withLock { s -> (buffer: UnsafeMutableRawBufferPointer, at: Int64, generation: Int)? in
                guard !s.closed, s.failure == nil, s.next < length, s.hasRoom else { return nil }
                let buffer: UnsafeMutableRawBufferPointer
                if let spare = s.spare.popLast() {
                    buffer = spare
                } else {
                    s.allocated += 1
                    buffer = Self.map()
                }
                return (buffer, s.next, s.generation)
            }
            guard let job else { return stopReading() }
            let count = Int(min(Int64(Self.bufferSize), length - job.at))
            disk.beforeRead?(count)
            let n: Int? = reader.seek(to: job.at)
                ? reader.read(into: UnsafeMutableRawBufferPointer(rebasing: job.buffer[..<count])) : nil
            let resume = state.withLock { s -> (@Sendable () -> Void)? in
                if job.generation != s.generation {
                    s.spare.append(job.buffer)
                } else if let n, n > 0 {
                    s.ready.append(Chunk(buffer: job.buffer, count: n))
                    s.next = job.at + Int64(n)
                } else {
                    s.spare.append(job.buffer)
                    s.failure = reader.failure ?? .local(path: "request body", errno: EIO,
                                                         message: "ended after \(job.at) of its \(length) bytes")
                }
                return Self.unpause(&s)
            }
            resume?()
            if !continuing { return stopReading() }
        }
    }

    private func stopReading() {
        let (closeNow, resume) = state.withLock { s -> (Bool, (@Sendable () -> Void)?) in
            s.reading = false
            return (s.closed, Self.unpause(&s))
        }
        resume?()
        if closeNow { reader.close() }
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
