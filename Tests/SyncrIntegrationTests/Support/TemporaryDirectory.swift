import Foundation

/// A unique folder under the system temp dir, removed when `remove()` is called or the
/// object goes away.
///
/// Every test makes its own, because Swift Testing runs tests in parallel.
final class TemporaryDirectory: Sendable {
    /// The folder; it exists until removal.
    let url: URL

    /// The folder as a file system path.
    var path: String { url.path }

    /// Creates `<tmp>/syncr-<prefix>-<uuid>/`.
    /// - Parameter prefix: names the folder, to tell leftovers apart when debugging.
    init(prefix: String = "test") throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp"
        url = URL(fileURLWithPath: base, isDirectory: true)
            .appendingPathComponent("syncr-\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the folder (not created).
    func appending(_ component: String) -> URL {
        url.appendingPathComponent(component)
    }

    /// Creates a subfolder (and its parents) and returns it.
    @discardableResult
    func makeDirectory(_ component: String) throws -> URL {
        let sub = url.appendingPathComponent(component, isDirectory: true)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        return sub
    }

    /// Removes the folder and everything in it; safe to call twice.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    deinit {
        remove()
    }
}
