import Foundation
import Testing
@testable import SyncrCore

/// The commands syncr suggests are pasted into a shell: each word must reach the program as it
/// was, whatever an S3 key holds.
@Suite(.timeLimit(.minutes(10)))
struct ShellWordTests {
    @Test func plainWordsStayAsTheyAre() {
        #expect(ShellWord.command(["aws", "--endpoint-url", "http://127.0.0.1:8333", "--key", "a/b-c_d.e+f@g%h=i,j"])
                == "aws --endpoint-url http://127.0.0.1:8333 --key a/b-c_d.e+f@g%h=i,j")
    }

    /// The shell gives back every word exactly, checked by running it.
    @Test(arguments: ["a key with spaces.bin", "it's.bin", "$HOME/`id`/*.bin", "", "x\ny", "naïve ☃.bin", "'", "a\\b"])
    func everyWordReachesTheProgramUnchanged(_ word: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "printf '%s|' " + ShellWord.command([word, "end"])]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(String(decoding: output, as: UTF8.self) == word + "|end|")
    }

    @Test func theAbortCommandQuotesTheKey() {
        let error = CachePruneError.uploadNotAborted(record: "/c/x.multipart", bucket: "b", key: "my dir/it's.bin",
                                                     uploadID: "u1", endpoint: nil, reason: "no S3 credentials")
        #expect(error.description.hasSuffix(
            "abort it by hand and remove /c/x.multipart: aws s3api abort-multipart-upload --bucket b --key 'my dir/it'\\''s.bin' --upload-id u1"),
                "\(error.description)")
    }
}
