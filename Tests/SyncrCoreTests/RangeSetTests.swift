import Foundation
import Testing
@testable import SyncrCore

/// The set of byte ranges on disk, and how the missing ones are cut into pieces.
@Suite(.timeLimit(.minutes(10))) struct RangeSetTests {
    @Test(arguments: [
        // (ranges inserted, the set)
        ([0..<10, 20..<30], [0..<10, 20..<30]),
        ([20..<30, 0..<10], [0..<10, 20..<30]),
        ([0..<10, 10..<20], [0..<20]),                 // touching ranges merge
        ([0..<15, 10..<20], [0..<20]),                 // overlapping ranges merge
        ([0..<10, 20..<30, 5..<25], [0..<30]),         // one range bridges two
        ([5..<6, 0..<100], [0..<100]),                 // swallowed
        ([0..<0, 7..<7], []),                          // empty ranges are nothing
        ([30..<40, 0..<10, 15..<20, 10..<15], [0..<20, 30..<40]),
    ] as [([Range<Int64>], [Range<Int64>])])
    func insertKeepsRangesSortedDisjointAndNonAdjacent(inserted: [Range<Int64>], expected: [Range<Int64>]) {
        #expect(RangeSet(inserted).ranges == expected)
    }

    @Test func gapsAreWhatIsMissingUpToTheSize() {
        let set = RangeSet([0..<100, 200..<300, 900..<1000])
        #expect(set.gaps(upTo: 1000) == [100..<200, 300..<900])
        #expect(set.gaps(upTo: 250) == [100..<200])
        #expect(set.gaps(upTo: 1200) == [100..<200, 300..<900, 1000..<1200])
        #expect(RangeSet().gaps(upTo: 10) == [0..<10])
        #expect(!set.covers(1000) && RangeSet([0..<1000]).covers(1000) && RangeSet([0..<1000]).covers(10))
    }

    @Test func prefixAndCount() {
        #expect(RangeSet([0..<100, 200..<300]).prefix == 100)
        #expect(RangeSet([50..<100]).prefix == 0, "a set not starting at 0 has no prefix")
        #expect(RangeSet([0..<100, 200..<300]).count == 200)
        #expect(RangeSet([0..<100, 200..<300]).description == "0-99,200-299")
    }

    @Test func storedAsPairsAndReadBackTheSame() throws {
        let set = RangeSet([0..<100, 200..<300])
        let json = try JSONEncoder().encode(set)
        #expect(String(decoding: json, as: UTF8.self) == "[[0,100],[200,300]]")
        #expect(try JSONDecoder().decode(RangeSet.self, from: json) == set)
        // Written by hand or torn: overlapping pairs are merged on reading.
        #expect(try JSONDecoder().decode(RangeSet.self, from: Data("[[50,100],[0,60]]".utf8)).ranges == [0..<100])
    }

    @Test(arguments: ["[[5,3]]", "[[-1,3]]", "[[1,2,3]]", "[[1]]"])
    func aBadPairIsRefused(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RangeSet.self, from: Data(json.utf8)) }
    }

    @Test func piecesHalveTheLargestUntilThereAreEnough() {
        let mib: Int64 = 1 << 20
        // 8 MiB over 4 connections: four 2 MiB pieces, in order, covering it exactly.
        let four = SegmentedFetch.pieces([0..<8 * mib], count: 4, minimum: mib)
        #expect(four == [0..<2 * mib, 2 * mib..<4 * mib, 4 * mib..<6 * mib, 6 * mib..<8 * mib])
        // Never below the minimum: 3 MiB over 8 connections is cut once only.
        let few = SegmentedFetch.pieces([0..<3 * mib], count: 8, minimum: mib)
        #expect(few.count == 2 && RangeSet(few) == RangeSet([0..<3 * mib]), "\(few)")
        // Holes stay holes: the gaps are cut, never what is already on disk.
        let gaps = RangeSet([0..<mib, 5 * mib..<6 * mib]).gaps(upTo: 8 * mib)
        let pieces = SegmentedFetch.pieces(gaps, count: 4, minimum: mib)
        #expect(RangeSet(pieces) == RangeSet(gaps) && pieces.count == 4, "\(pieces)")
    }
}
