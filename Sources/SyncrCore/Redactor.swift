import Foundation
import SyncrManifest

/// Masks secrets in text before it is shown anywhere.
///
/// The manifest's `${ENV}` expansions are secrets; so is the user information of a URL
/// (`https://user:password@host`, or a lone token before the `@`), and the value of a query
/// parameter named like a credential (`?token=`, `X-Amz-Signature=`). Every string that leaves
/// the library for output passes through `scrub`.
public struct Redactor: Sendable {
    /// The values to mask, at least 3 characters long, longest first so a secret containing
    /// another is masked whole.
    public let secrets: [String]

    /// Creates a redactor for `secrets` (usually `Manifest.secrets`, the `${ENV}` values).
    public init(secrets: [String]) {
        // Very short values (a "1" from ${RETRY:-1}) would mask half of every message; values
        // under 3 characters are not treated as secrets worth masking.
        self.secrets = Array(Set(secrets.filter { $0.count >= 3 })).sorted { $0.count > $1.count }
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
    /// so that two overlapping secrets leave no fragment of either.
    private func maskSecrets(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var ranges: [Range<Int>] = []
        for secret in secrets {
            let needle = Array(secret.utf8)
            guard needle.count <= bytes.count else { continue }
            var i = 0
            while i + needle.count <= bytes.count {
                if bytes[i] == needle[0] && Array(bytes[i..<(i + needle.count)]) == needle {
                    ranges.append(i..<(i + needle.count))
                }
                i += 1
            }
        }
        guard !ranges.isEmpty else { return text }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for r in ranges {
            // Overlapping occurrences merge; merely adjacent ones stay two masks.
            if let last = merged.last, r.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        var out: [UInt8] = []
        var position = 0
        for r in merged {
            out += bytes[position..<r.lowerBound]
            out += Array("***".utf8)
            position = r.upperBound
        }
        out += bytes[position...]
        return String(decoding: out, as: UTF8.self)
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
