/// Words of a command line that syncr suggests running, quoted for a POSIX shell, so that the
/// command can be pasted whatever a key or an endpoint holds (spaces, `$`, quotes, `*`).
enum ShellWord {
    /// `word` as is when every byte is one a shell leaves alone, else in single quotes (a `'`
    /// inside becomes `'\''`).
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "-_./:@%+=,".utf8.contains(byte)
            }
        }
        if plain { return word }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// The words of a command, each quoted as needed, joined by spaces.
    static func command(_ words: [String]) -> String {
        words.map(quoted).joined(separator: " ")
    }
}
