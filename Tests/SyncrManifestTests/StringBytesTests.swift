import Foundation
import Testing
import SyncrManifest

/// `containsByte`, the byte search every URL and message goes through before masking or
/// expanding: the same answer as walking the UTF-8, for every kind of string Swift stores.
@Suite(.timeLimit(.minutes(10))) struct StringBytesTests {
    @Test(arguments: [
        ("", UInt8(ascii: "@"), false),
        ("a@b", UInt8(ascii: "@"), true),                              // small (inline) string
        ("https://user@host.example/some/long/path/file.bin", UInt8(ascii: "@"), true),
        ("https://host.example/some/long/path/file.bin?x", UInt8(ascii: "="), false),
        ("https://hôst.example/ünïcode/${TOKEN}", UInt8(ascii: "$"), true),
        ("https://hôst.example/ünïcode/", 0xC3, true),                 // a byte of a multi-byte scalar
        ("$", UInt8(ascii: "$"), true),
    ])
    func findsAByteAsTheUTF8Holds(text: String, byte: UInt8, expected: Bool) {
        #expect(text.containsByte(byte) == expected)
        #expect(text.containsByte(byte) == text.utf8.contains(byte))
    }

    /// A string bridged from Foundation may have no contiguous UTF-8: the walk answers then.
    @Test func aBridgedStringIsAskedToo() {
        let bridged = NSString(string: "https://user@host.example/path") as String
        #expect(bridged.containsByte(UInt8(ascii: "@")))
        #expect(!bridged.containsByte(UInt8(ascii: "=")))
    }
}
