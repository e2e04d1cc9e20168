import Foundation
import SyncrHTTP
import SyncrManifest
import SyncrS3

/// Masks secrets in text before it is shown anywhere.
///
/// The manifest's `${ENV}` expansions are secrets; so is the user information of a URL
/// (`https://user:password@host`, or a lone token before the `@`), and the value of a query
/// parameter named like a credential (`?token=`, `X-Amz-Signature=`). Every string that leaves
/// the library for output passes through `scrub`. A secret of `caselessLength` bytes or more is
/// found whatever the case of its ASCII letters, as a server quoting the request may fold it.
public struct Redactor: Sendable {
    /// The values to mask, at least 3 characters long, longest first so a secret containing
    /// another is masked whole.
    public let secrets: [String]

    /// Creates a redactor for `secrets` (usually `Manifest.secrets`, the `${ENV}` values).
    public init(secrets: [String]) {
        // Very short values (a "1" from ${RETRY:-1}) would mask half of every message; values
        // under 3 characters are not treated as secrets worth masking.
        var kept = Set(secrets.filter { $0.count >= 3 })
        // A secret with a tab or a newline in it (a quoted netrc password) is quoted from an
        // echoing server's answer as `HTTPResponse.printable` shows bodies: with spaces there.
        kept.formUnion(kept.map { HTTPResponse.printable(Array($0.utf8), limit: .max) }.filter { $0.count >= 3 })
        self.secrets = kept.sorted { $0.count > $1.count }
        // A server that quotes the request back (an error page echoing the URL or a header)
        // quotes it percent-encoded: `Xy7!` as `Xy7%21`; or in JSON, as `a\/b` (PHP escapes
        // every `/`).
        let encoded = Set(kept.flatMap(Self.percentEncodings)).subtracting(kept).sorted { $0.count > $1.count }
        let escaped = Set(kept.flatMap(Self.jsonEscapes)).subtracting(kept).sorted { $0.count > $1.count }
        plainNeedles = self.secrets.map(Needle.init)
        encodedNeedles = encoded.map(Needle.init)
        escapedNeedles = escaped.map(Needle.init)
    }

    /// The forms of `secrets` as they are looked for: every one as is.
    private let plainNeedles: [Needle]
    /// The percent-encoded forms of `secrets` that differ from them; looked for only in text
    /// that holds a `%` or a `+`, so that most text is scanned once per secret, as before.
    private let encodedNeedles: [Needle]
    /// The JSON-escaped forms of `secrets` that differ from them; looked for only in text that
    /// holds a `\`.
    private let escapedNeedles: [Needle]

    /// Secrets at least this long are found whatever the case of their ASCII letters: a server
    /// that quotes the request back may fold it (`authorization: bearer mytoken`). Shorter
    /// ones only as they are, or a 3-letter secret would mask that word in every message.
    static let caselessLength = 6

    /// One form of a secret, as the bytes looked for: ASCII letters lowercased when it is
    /// looked for without regard to case (the text is lowercased once to match).
    struct Needle: Sendable {
        let bytes: [UInt8]
        let caseless: Bool

        init(_ form: String) {
            let bytes = Array(form.utf8)
            caseless = bytes.count >= Redactor.caselessLength && bytes.contains(where: Redactor.isASCIILetter)
            self.bytes = caseless ? Redactor.folded(bytes) : bytes
        }
    }

    static func isASCIILetter(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
    }

    /// `bytes` with ASCII capitals lowercased; every other byte (UTF-8's multi-byte sequences
    /// are all 0x80 and above) as it is, so offsets stay those of the original.
    static func folded(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
    }

    /// A secret as a JSON string carries it, where that differs: `\`, `"` and control bytes
    /// escaped, with `/` as is and as `\/`, and letters beyond ASCII as they are and as
    /// `\u00e9` (PHP's `json_encode` writes them so).
    static func jsonEscapes(_ secret: String) -> [String] {
        let ascii = secret.unicodeScalars.allSatisfy(\.isASCII)
        let forms = jsonEscaped(secret, asciiOnly: false) + (ascii ? [] : jsonEscaped(secret, asciiOnly: true))
        return Array(Set(forms)).filter { $0 != secret }
    }

    /// `secret` escaped as a JSON string's content (`asciiOnly`: every scalar beyond ASCII as
    /// `\uXXXX`, a surrogate pair above U+FFFF), with `/` as is and as `\/`.
    private static func jsonEscaped(_ secret: String, asciiOnly: Bool) -> [String] {
        func hex4(_ v: UInt32) -> String {
            let h = String(v, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - h.count)) + h
        }
        var escaped = ""
        for scalar in secret.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            default:
                if scalar.value < 0x20 {
                    escaped += hex4(scalar.value)
                } else if asciiOnly && scalar.value > 0xFFFF {
                    let v = scalar.value - 0x10000
                    escaped += hex4(0xD800 + (v >> 10)) + hex4(0xDC00 + (v & 0x3FF))
                } else if asciiOnly && !scalar.isASCII {
                    escaped += hex4(scalar.value)
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return [escaped, escaped.replacingOccurrences(of: "/", with: "\\/")]
    }

    /// A secret as a URL may carry it, where that differs: every byte but the unreserved as
    /// `%XX` (`URIEncoding`), in upper- and lower-case hex, each also as a form writes a space
    /// (`+`).
    static func percentEncodings(_ secret: String) -> [String] {
        let upper = URIEncoding.encode(secret)
        guard upper != secret else { return [] }
        var lower: [UInt8] = []
        var hexLeft = 0
        for b in upper.utf8 {
            lower.append(hexLeft > 0 && b >= UInt8(ascii: "A") && b <= UInt8(ascii: "F") ? b | 0x20 : b)
            hexLeft = b == UInt8(ascii: "%") ? 2 : max(0, hexLeft - 1)
        }
        let forms = [upper, String(decoding: lower, as: UTF8.self)]
        return forms + forms.map { $0.replacingOccurrences(of: "%20", with: "+") }
    }

    /// `text` with every secret and every URL credential or credential-named query value masked.
    public func scrub(_ text: String) -> String {
        Self.maskURLCredentials(maskSecrets(text))
    }

    /// A URL the server chose (a redirect's target), for keeping in a record: masked, and without
    /// its query and fragment, where presigned URLs carry their tokens.
    public func scrubLocation(_ url: String) -> String {
        // On the bytes (both marks are ASCII): every answer's URL passes here, and walking
        // Characters costs grapheme breaking. Most URLs have neither, and are not copied.
        let cut = url.utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        return scrub(cut.map { String(url[..<$0]) } ?? url)
    }

    /// Finds every occurrence of every secret in the original text first, then masks the union,
    /// so that two overlapping secrets leave no fragment of either. Secrets long enough are
    /// found in the text lowercased once (`Needle.caseless`), at the same offsets.
    private func maskSecrets(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        let bytes = Array(text.utf8)
        let encoded = bytes.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
        let escaped = bytes.contains(UInt8(ascii: "\\"))
        let needles = plainNeedles + (encoded ? encodedNeedles : []) + (escaped ? escapedNeedles : [])
        let folded = needles.contains(where: \.caseless) ? Self.folded(bytes) : bytes
        var ranges: [Range<Int>] = []
        for needle in needles {
            ranges += Self.occurrences(of: needle.bytes, in: needle.caseless ? folded : bytes)
        }
        ranges += Self.cutSecrets(bytes, folded: folded, needles: needles)
        guard !ranges.isEmpty else { return text }
        return Masking.masked(bytes, ranges: ranges)
    }

    /// Where `needle` occurs in `haystack`, overlaps included.
    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Range<Int>] {
        guard let first = needle.first, needle.count <= haystack.count else { return [] }
        var found: [Range<Int>] = []
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) {
                found.append(i..<(i + needle.count))
            }
            i += 1
        }
        return found
    }

    /// The start of a secret right before a `…` where a text was cut (a server's error page is
    /// cut to 300 characters before it is masked, `HTTPResponse.printable`): the secret whole is
    /// not there to be found, and its first characters must not be shown either. At least 3
    /// bytes, as for a whole secret; `folded` is `bytes` lowercased, for caseless needles.
    static func cutSecrets(_ bytes: [UInt8], folded: [UInt8], needles: [Needle]) -> [Range<Int>] {
        let ellipsis: [UInt8] = [0xE2, 0x80, 0xA6]
        var found: [Range<Int>] = []
        var j = 0
        while j + 3 <= bytes.count {
            defer { j += 1 }
            guard bytes[j] == ellipsis[0], bytes[j + 1] == ellipsis[1], bytes[j + 2] == ellipsis[2] else { continue }
            for needle in needles {
                let text = needle.caseless ? folded : bytes
                var k = min(needle.bytes.count - 1, j)
                while k >= 3 {
                    if text[(j - k)..<j].elementsEqual(needle.bytes[0..<k]) {
                        found.append((j - k)..<j)
                        break
                    }
                    k -= 1
                }
            }
        }
        return found
    }

    /// `scheme://user:password@host` → `scheme://user:***@host`; `scheme://token@host` →
    /// `scheme://***@host`.
    static func maskURLCredentials(_ text: String) -> String {
        URLCredentials.masked(text)
    }
}

/// Passes events on with every text in them masked: the one place all progress output goes
/// through, so that no message built anywhere in a run can print a secret.
struct ScrubbingReporter: ProgressReporter {
    let inner: any ProgressReporter
    let redactor: Redactor

    func report(_ event: ProgressEvent) {
        switch event {
        case .started(var item):
            item.url = redactor.scrub(item.url)
            item.reason = redactor.scrub(item.reason)
            inner.report(.started(item: item))
        case .progress:
            inner.report(event)
        case .retrying(let index, let attempt, let delay, let error, let kind, let object):
            inner.report(.retrying(index: index, attempt: attempt, delay: delay, error: error.scrubbed(redactor), kind: kind,
                                   object: object))
        case .note(let index, let note, let kind, let object):
            inner.report(.note(index: index, note: note.scrubbed(redactor), kind: kind, object: object))
        case .finished(var result):
            result.item.url = redactor.scrub(result.item.url)
            result.item.reason = redactor.scrub(result.item.reason)
            result.outcome = result.outcome.scrubbed(redactor)
            result.notes = result.notes.map { $0.scrubbed(redactor) }
            inner.report(.finished(result: result))
        }
    }
}

/// A redactor prints as how many secrets it masks, never as them: `print(session.redactor)` and
/// `dump(session)` showed every `${VAR}` value of the manifest.
extension Redactor: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Redactor(N secrets)`.
    public var description: String { "Redactor(\(secrets.count) secrets)" }

    /// The same as `description`.
    public var debugDescription: String { description }

    /// No children: the secrets stay out of `dump`.
    public var customMirror: Mirror { Mirror(self, children: [:], displayStyle: .struct) }
}
