import Foundation
import Testing
@testable import SyncrCore
import SyncrHTTP

/// Cache records are read by `RecordReader` and written by `RecordWriter`, not by Foundation's
/// JSON coders: the same document either way, so caches written before stay readable.
@Suite(.timeLimit(.minutes(10)))
struct RecordJSONTests {
    static func full() -> EntryState {
        var state = EntryState(url: "https://example.com/a b/ü?x=\"1\"\\2")
        state.finalURL = "https://cdn.example.com/a\u{1}"
        state.size = 1 << 40
        state.etag = EntityTag(opaque: "abc\"def", isWeak: true)
        state.lastModified = "Mon, 30 Nov 2026 16:53:16 GMT"
        state.ranges = RangeSet([0..<100, 200..<300])
        state.complete = true
        state.verified = ["sha256": "00ff", "md5": "aa"]
        state.destination = "/tmp/out/😀.bin"
        state.destinationFingerprint = FileFingerprint(device: 65024, inode: 1_606_128, size: 64,
                                                       mtimeNanoseconds: 1_796_057_725_764_529_303)
        state.destinationTree = "tree"
        state.updated = 1_796_057_725
        return state
    }

    /// What syncr wrote before (JSONEncoder, sorted keys, escaped slashes) reads back whole.
    @Test func readsWhatTheCodableFormWrote() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for state in [Self.full(), EntryState(url: "http://h/f")] {
            let bytes = Array(try encoder.encode(state))
            #expect(EntryState(recordJSON: bytes) == state)
        }
    }

    /// What it writes now reads back whole, and Foundation's decoder (for anyone reading records
    /// with other tools) reads it the same.
    @Test func writesWhatBothReadBack() throws {
        for state in [Self.full(), EntryState(url: "http://h/f")] {
            let bytes = state.recordJSON
            #expect(EntryState(recordJSON: bytes) == state)
            #expect(try JSONDecoder().decode(EntryState.self, from: Data(bytes)) == state)
        }
    }

    /// Byte for byte what Foundation writes with sorted keys (and slashes left alone): members
    /// are made in key order, so the writer never sorts them.
    @Test func writesTheBytesOfTheCodableFormWithSortedKeys() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var noFingerprint = Self.full()
        noFingerprint.destinationFingerprint = nil
        noFingerprint.etag = nil
        for state in [Self.full(), noFingerprint, EntryState(url: "http://h/f")] {
            let expected = String(decoding: try encoder.encode(state), as: UTF8.self)
            #expect(String(decoding: state.recordJSON, as: UTF8.self) == expected)
        }
    }

    /// A torn, foreign or hostile file is no record: the data is fetched again.
    @Test(arguments: ["", "{", "{\"format\":1}", "[1,2]", "{\"format\":1,\"url\":\"u\",\"ranges\":[[5,1]]}",
                      "{\"format\":1,\"url\":\"u\",\"size\":99999999999999999999}", "{\"format\":1,\"url\":\"u\"} x",
                      "{\"format\":1,\"url\":\"\\ud800\"}", String(repeating: "[", count: 100_000),
                      #"{"format":1,"url":"u","ranges":[[0,1,2]]}"#, #"{"format":1,"url":"u","ranges":[[0]]}"#,
                      #"{"format":1,"url":"u","ranges":[[0,"1"]]}"#, #"{"format":1,"url":"u",}"#,
                      #"{"format":1 "url":"u"}"#, #"{"format":1,"url":"u","destinationFingerprint":{"device":1,"inode":2,"size":3}}"#,
                      #"{"format":1,"url":"u","destinationFingerprint":7}"#,
                      #"{"format":1,"url":"u","good":-5,"size":300}"#, #"{"format":1,"url":"u","size":-1}"#,
                      #"{"format":1,"url":"u","future":"# + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "}"])
    func notARecord(text: String) {
        #expect(EntryState(recordJSON: Array(text.utf8)) == nil)
    }

    /// A string of bytes that are not UTF-8 is no record, whether or not it needs escapes
    /// (ASCII strings are made from their bytes without a check).
    @Test func invalidUTF8IsNoRecord() {
        for url in [[0xFF], [0x61, 0xC3], [0xC3, 0x28, 0x5C, 0x6E]] as [[UInt8]] {
            let bytes = Array(#"{"format":1,"url":""#.utf8) + url + Array(#""}"#.utf8)
            #expect(EntryState(recordJSON: bytes) == nil)
        }
        let ascii = Array(#"{"format":1,"url":"http://h/a b"}"#.utf8)
        #expect(EntryState(recordJSON: ascii)?.url == "http://h/a b")
    }

    /// A value of the wrong kind leaves its field empty, as a missing one does; members this
    /// version does not know (a later one may write them) are read past, whatever they hold.
    @Test func wrongKindsAndUnknownMembersAreLeftOut() {
        let text = #"""
            { "format" : 1 , "url":"u","size":"big","etag":[1],"complete":1,
              "future":{"a":[1,{"b":null}],"c":"d\n","e":-3,"f":true},"verified":{"sha256":"ab","md5":2},
              "ranges":"all","good":7, "destination":5, "updated":"soon" }
            """#
        let state = EntryState(recordJSON: Array(text.utf8))
        #expect(state != nil)
        #expect(state?.url == "u")
        #expect(state?.size == nil)
        #expect(state?.etag == nil)
        #expect(state?.complete == false)
        #expect(state?.verified == ["sha256": "ab"])
        #expect(state?.ranges == RangeSet([0..<7]))
        #expect(state?.destination == nil)
        #expect(state?.updated == 0)
    }

    /// Keys are matched as JSON reads them: escapes undone, and bytes that are not UTF-8 make
    /// the record no record even in a member syncr does not know.
    @Test func keysAreReadAsJSONReadsThem() {
        let escaped = #"{"format":1,"\u0075rl":"u","verified":{"sha\u0032\u00356":"ab"}}"#
        #expect(EntryState(recordJSON: Array(escaped.utf8))?.url == "u")
        #expect(EntryState(recordJSON: Array(escaped.utf8))?.verified == ["sha256": "ab"])
        let foreign = Array(#"{"format":1,"url":"u",""#.utf8) + [0xC3, 0x28] + Array(#"":1}"#.utf8)
        #expect(EntryState(recordJSON: foreign) == nil)
    }

    /// A repeated key counts with its last value, as it did when objects were read into a
    /// dictionary.
    @Test func aRepeatedKeyTakesItsLastValue() {
        let text = #"{"format":1,"url":"first","size":1,"url":"second","size":2}"#
        let state = EntryState(recordJSON: Array(text.utf8))
        #expect(state?.url == "second")
        #expect(state?.size == 2)
    }

    /// Keys come out sorted, so a record's bytes depend only on its content.
    @Test func keysAreSorted() {
        var state = Self.full()
        state.destinationFingerprint = nil  // its own "size" would be found first
        let text = String(decoding: state.recordJSON, as: UTF8.self)
        let keys = ["complete", "destination", "destinationTree", "etag", "finalURL",
                    "format", "good", "lastModified", "ranges", "size", "updated", "url", "verified"]
        let positions = keys.map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
    }
}
