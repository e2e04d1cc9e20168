import Foundation
import Testing
@testable import SyncrArchive

/// Side by side with Info-ZIP's `zip -r -6 -q` on a folder named by `SYNCR_ZIP_BENCH`; off unless
/// that is set. Prints times and sizes; asserts only that every archive tests OK. Run it in
/// release mode:
///
///     SYNCR_ZIP_BENCH=/path/to/tree swift test -c release -Xswiftc -enable-testing \
///         --filter ZipWriterBenchmark
///
/// The tree measured so far (99 MB, 554 files, 85 folders): 250 C headers and 161 Python
/// sources (text), 38 shared libraries from /usr/lib (binaries, ~45 MB), 100 `.gz` changelogs,
/// an 18 MB CSV, three 5 MiB random `.mp4` files and a 4 MiB random `.bin`.
@Suite(.timeLimit(.minutes(30)), .serialized, .enabled(if: ProcessInfo.processInfo.environment["SYNCR_ZIP_BENCH"] != nil))
struct ZipWriterBenchmark {
    private func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func againstInfoZip() throws {
        let tree = ProcessInfo.processInfo.environment["SYNCR_ZIP_BENCH"]!
        let rounds = Int(ProcessInfo.processInfo.environment["SYNCR_ZIP_BENCH_ROUNDS"] ?? "3") ?? 3
        let scratch = try Scratch("bench")
        let infoZip = scratch.path + "/infozip.zip"
        var lines: [String] = []
        func report(_ name: String, _ times: [Double], _ size: UInt64) {
            let best = times.min()!
            lines.append("\(name): best \(String(format: "%.3f", best)) s of \(times.map { String(format: "%.3f", $0) }), \(size) bytes")
        }

        var times: [Double] = []
        for _ in 0..<rounds {
            try? FileManager.default.removeItem(atPath: infoZip)
            times.append(try seconds {
                let r = try run("/usr/bin/zip", ["-r", "-6", "-q", infoZip, "."], cwd: tree)
                #expect(r.status == 0, "\(r.stderr)")
            })
        }
        let zipSize = (try FileManager.default.attributesOfItem(atPath: infoZip)[.size] as! NSNumber).uint64Value
        report("zip -r -6", times, zipSize)

        for threads in [1, 2] {
            let archive = scratch.path + "/syncr-\(threads).zip"
            var summary: ZipWriter.Summary?
            times = []
            for _ in 0..<rounds {
                times.append(try seconds {
                    summary = try ZipWriter.write(directory: tree, to: archive, options: .init(threads: threads))
                })
            }
            report("syncr threads \(threads)", times, summary!.archiveBytes)
            lines.append("  stored \(summary!.storedFiles), deflated \(summary!.deflatedFiles), size vs zip: "
                         + String(format: "%+.2f%%", (Double(summary!.archiveBytes) / Double(zipSize) - 1) * 100))
            let test = try run("/usr/bin/unzip", ["-tq", archive])
            #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
        }
        print(lines.joined(separator: "\n"))
    }
}
