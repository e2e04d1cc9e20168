import Testing
@testable import syncr
@testable import SyncrCore

/// The progress bar's frame cap, on a clock the test moves: whatever the machine's speed, the
/// bar draws at most 10 frames a second of its clock, however often it is asked to draw.
@Suite("progress bar frame cap", .timeLimit(.minutes(5)))
struct BarFrameCapTests {
    @Test func framesAreAtLeastATenthOfASecondApart() {
        // Steps of 1/128 s are exact in binary, so no rounding moves a frame.
        let step = 1.0 / 128
        let now = LockedBox(0.0)
        let frames = LockedBox<[Double]>([])
        let bar = BarReporter(quiet: false, entryCount: 1, palette: Palette(enabled: false),
                              clock: { now.withLock { $0 } },
                              output: { text in
                                  // A frame ends by erasing below the block; the final erase does not.
                                  if text.hasSuffix("\u{1B}[K\u{1B}[J") { frames.withLock { $0.append(now.withLock { $0 }) } }
                              },
                              ticking: false)
        bar.report(.started(item: ProgressTextTests.item("out/a.bin", size: 1 << 20)))
        // 3 s of the bar's clock, asked to draw at every step, with new progress every time.
        for i in 0..<384 {
            now.withLock { $0 = Double(i) * step }
            bar.report(.progress(index: 0, transferred: Int64(i) * 1000, total: 1 << 20))
            bar.draw()
        }
        bar.finish()
        let times = frames.withLock { $0 }
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect((gaps.min() ?? 0) >= 0.1, "frames at \(times)")
        // Drawn as soon as the cap allows: every 13 steps (0.1015625 s), 30 frames in 3 s.
        #expect(times.count == 30, "\(times.count) frames: \(times)")
    }
}
