@testable import SyncrHTTP

/// Builds a response head from `(name, value)` pairs, in order.
func makeHead(_ status: Int, _ fields: [(String, String)] = [],
              url: String = "https://example.com/file.bin") -> HTTPResponseHead {
    HTTPResponseHead(status: status,
                     fields: fields.map { HTTPResponseHead.HeaderField(name: $0.0, value: $0.1) },
                     effectiveURL: url)
}
