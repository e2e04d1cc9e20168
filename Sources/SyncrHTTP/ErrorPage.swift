import Foundation

/// What an HTML error page says, in a line: its `<title>`, else its first `<h1>`, else its text
/// without markup. A server's 413 or 500 page pasted whole into every log line (and each JUnit
/// failure) buried the message under markup; the title is what a browser would show.
enum ErrorPage {
    /// The page's words, or nil when `text` is not an HTML page (JSON, plain text: kept as sent).
    static func summary(_ text: String) -> String? {
        let start = text.drop { $0.isWhitespace }.prefix(16).lowercased()
        guard ["<!doctype html", "<html", "<head", "<body", "<title", "<h1"].contains(where: start.hasPrefix) else { return nil }
        for tag in ["title", "h1"] {
            if let inner = element(tag, in: text), case let words = plain(inner), !words.isEmpty { return words }
        }
        return plain(text[...])
    }

    /// The content of the first `<tag ...>...</tag>` (any case), or nil (none, or cut off).
    private static func element(_ tag: String, in text: String) -> Substring? {
        guard let open = text.range(of: "<" + tag, options: .caseInsensitive),
              let openEnd = text[open.upperBound...].firstIndex(of: ">"),
              let close = text.range(of: "</" + tag, options: .caseInsensitive, range: openEnd..<text.endIndex)
        else { return nil }
        return text[text.index(after: openEnd)..<close.lowerBound]
    }

    /// Text without tags, without what `<script>` and `<style>` hold, with the common entities
    /// decoded and white space folded.
    private static func plain(_ html: Substring) -> String {
        var out = ""
        var rest = html
        // The closing tag that ends a script or style, while inside one.
        var skippingTo: String?
        while let lt = rest.firstIndex(of: "<") {
            if skippingTo == nil { out += rest[..<lt] }
            guard let gt = rest[lt...].firstIndex(of: ">") else {
                rest = rest[rest.endIndex...]
                break
            }
            let name = rest[rest.index(after: lt)..<gt].prefix { $0.isLetter || $0 == "/" }.lowercased()
            if let end = skippingTo {
                if name == end { skippingTo = nil }
            } else if name == "script" || name == "style" {
                skippingTo = "/" + name
            }
            out += " "
            rest = rest[rest.index(after: gt)...]
        }
        if skippingTo == nil { out += rest }
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&nbsp;", " "),
                                    ("&amp;", "&")] {
            out = out.replacingOccurrences(of: entity, with: character)
        }
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
