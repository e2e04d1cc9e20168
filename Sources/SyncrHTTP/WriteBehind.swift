#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Synchronization
import SyncrLock

/// The threads that write downloaded bytes to files and read request bodies from them (for
/// `WriteBehind` and `ReadAhead`): never the engine thread, so that a slow disk (a network
/// mount, a throttled volume) never stops it. The transfers using that disk pause, while every
/// other request goes on.
public final class DiskWriter: Sendable {
    /// The writer every `FileSink` uses unless told otherwise. Four threads, each sink with at
    /// most one write in flight: a few writes stuck on a slow disk leave threads for the others
    /// (once all four wait, every sink's writes wait behind them).
    public static let shared = DiskWriter(threads: 4)

    private let queue: WorkQueue
    /// Runs on the writing thread before each write, with the descriptor and the byte count:
    /// lets a test play a slow disk and see the writes.
    let beforeWrite: (@Sendable (Int32, Int) -> Void)?
    /// Runs where a file's writeback is started, with the descriptor and the file range: lets
    /// a test see which ranges were started.
    let onWriteBack: (@Sendable (Int32, Range<Int64>) -> Void)?
    /// Runs before each read of a request body, with the byte count (on whichever thread
    /// reads: a disk thread, or the submitting task's for the first buffer): lets a test play
    /// a slow disk.
    let beforeRead: (@Sendable (Int) -> Void)?

    init(threads: Int, beforeWrite: (@Sendable (Int32, Int) -> Void)? = nil,
         onWriteBack: (@Sendable (Int32, Range<Int64>) -> Void)? = nil,
         beforeRead: (@Sendable (Int) -> Void)? = nil) {
        queue = WorkQueue(threads: threads, name: "syncr-disk")
        self.beforeWrite = beforeWrite
        self.onWriteBack = onWriteBack
        self.beforeRead = beforeRead
    }

    /// Jobs handed to the threads so far: a test counts hand-offs with it.
    let handOffs = Atomic<Int>(0)

    func submit(_ job: @escaping @Sendable () -> Void) {
        handOffs.add(1, ordering: .relaxed)
        queue.submit(job)
    }
}

/// What `WriteBehind.write` did with a piece of body.
enum WriteAdmission {
    /// Took this many bytes (fewer than offered when the sink's limit cut it).
    case took(Int)
    /// No room: the engine pauses the transfer until `resume` is called.
    case pause
    /// Writing failed earlier; the transfer must end with this.
    case fail(TransferError)
    /// The sink refused the piece (more than the range asked for).
    case refused
}

/// Gathers a transfer's body into 256 KiB buffers and writes them at their place in the file
/// on a `DiskWriter` thread, one write at a time and in order, so `written` always counts a
/// prefix of the body that is in the file.
///
/// At most `buffers` buffers per transfer: when all are full or being written, the piece is
/// refused with `.pause`, curl pauses the transfer (it stops reading that socket), and the
/// writer calls the resume handler when a buffer is free again. Memory is bounded by buffer
/// count × size per transfer, whatever the disk's speed.
///
/// The last buffer of a body is written by `settle`, on the thread of the task that awaited the
/// transfer: a small file (one buffer) then costs no hand-off to a writer thread and back.
final class WriteBehind: Sendable {
    /// The size of each buffer: the largest positional write. libcurl hands over at most 16 KiB
    /// per call; gathering them saves most system calls (65,536 `pwrite`s per GiB otherwise).
    static let bufferSize = 256 * 1024
    /// Buffers per transfer: one filling while the other is written.
    static let buffers = 2
    /// How often a file that will be flushed has its writeback started: every 8 MiB written.
    static let writeBackStep: Int64 = 8 << 20

    private struct Chunk {
        var buffer: UnsafeMutableRawBufferPointer
        var count = 0
        /// One of the transfer's buffers (reused), not a one-off for an oversized piece.
        var pooled = true
    }

    private struct State {
        /// The buffer receiving bytes, once one was needed.
        var filling: Chunk?
        /// Written buffers, ready for reuse.
        var spare: [UnsafeMutableRawBufferPointer] = []
        /// Buffers allocated and not yet freed (filling, queued, being written, spare).
        var allocated = 0
        /// Buffers waiting to be written, in file order, after the one being written.
        var queued: [Chunk] = []
        /// Someone (a writer thread, or `settle`) is writing `queued` out.
        var writing = false
        /// `write` answered `.pause`: resume the transfer once `wanted` bytes fit.
        var paused = false
        var wanted = 0
        /// The write that failed; nothing after it is written.
        var failure: TransferError?
        var resume: (@Sendable () -> Void)?
        /// Tasks in `settle` waiting for the writer to finish.
        var waiters: [CheckedContinuation<Void, Never>] = []

        var room: Int {
            let left = filling.map { WriteBehind.bufferSize - $0.count } ?? 0
            return left + (spare.count + WriteBehind.buffers - allocated) * WriteBehind.bufferSize
        }
        var holdsNothing: Bool { queued.isEmpty && !writing && (filling?.count ?? 0) == 0 }

        /// Whether a piece of `count` bytes can be taken now. A piece larger than all buffers
        /// (curl gives 16 KiB) gets a buffer of its own once nothing else is held, so it never
        /// waits for room that cannot come.
        func fits(_ count: Int) -> Bool {
            count > WriteBehind.bufferSize * WriteBehind.buffers ? holdsNothing : count <= room
        }
    }

    let fd: Int32
    /// Where the first body byte goes in the file.
    let offset: Int64
    let displayPath: String
    private let writer: DiskWriter
    private let state = Locked(State())
    private let writtenCounter = Atomic<Int64>(0)
    /// Start the disk's writing of what was written every this many bytes; nil: never.
    private let writeBackStep: Int64?
    /// Body bytes whose writeback was started. Touched only by the one thread writing.
    private let writeBackStarted = Atomic<Int64>(0)

    /// - Parameter writeBack: every this many bytes written, start the disk's writing of them
    ///   (`sync_file_range`), without waiting: the file's flush at the end then finds most of
    ///   its pages written instead of writing them all itself. For files that will be flushed;
    ///   nil for the others (in memory, or `fsync: false`), whose pages are better left alone.
    init(fd: Int32, offset: Int64, displayPath: String, writer: DiskWriter, writeBack: Int64? = nil) {
        self.fd = fd
        self.offset = offset
        self.displayPath = displayPath
        self.writer = writer
        writeBackStep = writeBack
    }

    deinit {
        state.withLock { s in
            s.filling.map { $0.buffer.deallocate() }
            s.queued.forEach { $0.buffer.deallocate() }
            s.spare.forEach { $0.deallocate() }
        }
    }

    /// Bytes in the file so far: a prefix of the body, every `pwrite` of it returned.
    var written: Int64 { writtenCounter.load(ordering: .acquiring) }

    /// How the transfer is resumed after `.pause`; set before the first write.
    func onResume(_ resume: @escaping @Sendable () -> Void) {
        state.withLock { $0.resume = resume }
    }

    /// Takes a piece of body, or answers `.pause` when there is no room for all of it.
    /// `reserve` is asked, under the lock, how many of the bytes the sink keeps (nil: refuse).
    func write(_ bytes: UnsafeRawBufferPointer, reserve: (Int) -> Int?) -> WriteAdmission {
        let (admission, start) = state.withLock { s -> (WriteAdmission, Bool) in
            if let failure = s.failure { return (.fail(failure), false) }
            if !s.fits(bytes.count) {
                s.paused = true
                s.wanted = bytes.count
                // Room comes when a writer recycles a buffer. With none at work (a piece larger
                // than the room left), or for a piece that waits until nothing is held, what is
                // held goes out first.
                if !s.writing || bytes.count > Self.bufferSize * Self.buffers { Self.sealFilling(&s) }
                return (.pause, Self.claimWriting(&s))
            }
            guard let n = reserve(bytes.count) else { return (.refused, false) }
            if bytes.count > Self.bufferSize * Self.buffers {
                s.queued.append(Self.copy(UnsafeRawBufferPointer(rebasing: bytes[..<n])))
            } else {
                Self.append(UnsafeRawBufferPointer(rebasing: bytes[..<n]), to: &s)
            }
            return (.took(n), Self.claimWriting(&s))
        }
        if start { writer.submit { [self] in drain() } }
        return admission
    }

    /// The transfer ended: the partly filled buffer joins the queue, for `settle` to write.
    /// Returns the write failure, if one happened.
    func seal() -> TransferError? {
        state.withLock { s in
            Self.sealFilling(&s)
            return s.failure
        }
    }

    /// Hands the bytes held in the partly filled buffer to the writer, so that a stalled
    /// transfer's checkpoint can count them soon. Returns false once a write failed.
    @discardableResult
    func writeHeld() -> Bool {
        let (ok, start) = state.withLock { s -> (Bool, Bool) in
            Self.sealFilling(&s)
            return (s.failure == nil, Self.claimWriting(&s))
        }
        if start { writer.submit { [self] in drain() } }
        return ok
    }

    /// Returns once every byte taken is written (or writing failed), with the failure, if any;
    /// then frees the buffers. Called after `seal`, when the transfer no longer writes.
    func settle() async -> TransferError? {
        while true {
            let mine = state.withLock { s -> Bool? in
                if s.writing { return false }
                if s.queued.isEmpty || s.failure != nil { return nil }
                s.writing = true
                return true
            }
            switch mine {
            case true?: drain()
            case false?:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { s -> Bool in
                        if !s.writing { return true }
                        s.waiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            case nil:
                return state.withLock { s in
                    Self.free(&s)
                    // The transfer is over: nothing will resume it, and the handler (which holds
                    // the transfer) must not outlive it.
                    s.resume = nil
                    return s.failure
                }
            }
        }
    }

    // MARK: writing

    /// Writes the queue out in order until it is empty; whoever set `writing` runs it.
    private func drain() {
        while true {
            guard let chunk = nextOrStop() else { return }
            writer.beforeWrite?(fd, chunk.count)
            let failure = writeOut(chunk)
            let resume = state.withLock { s -> (@Sendable () -> Void)? in
                if let failure { s.failure = failure }
                Self.recycle(chunk, into: &s)
                return Self.unpause(&s)
            }
            resume?()
        }
    }

    /// The next buffer to write; else, in the same look at the state (a buffer queued between
    /// two looks would be left behind), stops writing and wakes whoever waits for that.
    private func nextOrStop() -> Chunk? {
        let (next, waiters, resume) = state.withLock { s -> (Chunk?, [CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) in
            if s.failure == nil, !s.queued.isEmpty { return (s.queued.removeFirst(), [], nil) }
            // After a failure nothing more is written: what is queued is dropped.
            while !s.queued.isEmpty { Self.recycle(s.queued.removeFirst(), into: &s) }
            s.writing = false
            defer { s.waiters = [] }
            return (nil, s.waiters, Self.unpause(&s))
        }
        // The transfer's resume first: once `settle` is woken, nothing may call it any more.
        resume?()
        waiters.forEach { $0.resume() }
        return next
    }

    /// `pwrite`s a buffer at `offset + written`, counting what lands.
    private func writeOut(_ chunk: Chunk) -> TransferError? {
        guard var base = chunk.buffer.baseAddress else { return nil }
        var remaining = chunk.count
        while remaining > 0 {
            let position = offset + writtenCounter.load(ordering: .relaxed)
            let n = pwrite(fd, base, remaining, off_t(position))
            if n <= 0 {
                let code = n == 0 ? EIO : errno
                if code == EINTR { continue }
                return .local(path: displayPath, errno: code, message: "cannot write: " + String(cString: strerror(code)))
            }
            base += n
            remaining -= n
            writtenCounter.add(Int64(n), ordering: .releasing)
        }
        startWriteBack()
        return nil
    }

    /// Starts the writeback of the bytes written since the last start, once they are a step.
    /// A file system that cannot (a pipe, some network ones) answers an error, and the flush
    /// at the end does all the writing, as it would have anyway.
    private func startWriteBack() {
        guard let step = writeBackStep else { return }
        let done = writtenCounter.load(ordering: .relaxed), started = writeBackStarted.load(ordering: .relaxed)
        guard done - started >= step else { return }
        writer.onWriteBack?(fd, (offset + started)..<(offset + done))
        _ = syncr_start_writeback(fd, off_t(offset + started), off_t(done - started))
        writeBackStarted.store(done, ordering: .relaxed)
    }

    // MARK: the state, under the lock

    private static func append(_ bytes: UnsafeRawBufferPointer, to s: inout State) {
        var from = 0
        while from < bytes.count {
            if s.filling == nil {
                if s.spare.isEmpty {
                    s.allocated += 1
                    s.filling = Chunk(buffer: .allocate(byteCount: bufferSize, alignment: 64))
                } else {
                    s.filling = Chunk(buffer: s.spare.removeLast())
                }
            }
            let n = min(bufferSize - s.filling!.count, bytes.count - from)
            s.filling!.buffer.baseAddress!.advanced(by: s.filling!.count)
                .copyMemory(from: bytes.baseAddress! + from, byteCount: n)
            s.filling!.count += n
            from += n
            if s.filling!.count == bufferSize { sealFilling(&s) }
        }
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer) -> Chunk {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
        buffer.copyMemory(from: bytes)
        return Chunk(buffer: buffer, count: bytes.count, pooled: false)
    }

    private static func sealFilling(_ s: inout State) {
        guard let filling = s.filling, filling.count > 0 else { return }
        s.queued.append(filling)
        s.filling = nil
    }

    /// Whether the caller must start a writer: a buffer waits and nobody writes. (`seal` does
    /// not ask: the last buffer is left to `settle`.)
    private static func claimWriting(_ s: inout State) -> Bool {
        guard !s.writing, !s.queued.isEmpty, s.failure == nil else { return false }
        s.writing = true
        return true
    }

    private static func recycle(_ chunk: Chunk, into s: inout State) {
        if chunk.pooled {
            s.spare.append(chunk.buffer)
        } else {
            chunk.buffer.deallocate()
        }
    }

    /// The resume handler, if the transfer waits for room that is now there (or for the
    /// failure it must be told of).
    private static func unpause(_ s: inout State) -> (@Sendable () -> Void)? {
        guard s.paused, s.failure != nil || s.fits(s.wanted) else { return nil }
        s.paused = false
        return s.resume
    }

    private static func free(_ s: inout State) {
        s.spare.forEach { $0.deallocate() }
        s.allocated -= s.spare.count
        s.spare = []
        if let filling = s.filling, filling.count == 0 {
            filling.buffer.deallocate()
            s.allocated -= 1
            s.filling = nil
        }
    }
}
