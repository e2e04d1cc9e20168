@testable import SyncrHTTP

/// Waits until `condition` holds, looking every millisecond for up to 10 s; returns whether it
/// came true (the caller's expectation then says what it waited for).
@discardableResult
func waitUntil(_ condition: () -> Bool) async throws -> Bool {
    for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
    return condition()
}

/// Builds a response head from `(name, value)` pairs, in order.
func makeHead(_ status: Int, _ fields: [(String, String)] = [],
              url: String = "https://example.com/file.bin") -> HTTPResponseHead {
    HTTPResponseHead(status: status,
                     fields: fields.map { HTTPResponseHead.HeaderField(name: $0.0, value: $0.1) },
                     effectiveURL: url)
}
