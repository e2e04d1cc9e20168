import Foundation

/// Whether a process has a file open whose path `matches`, from its descriptors in /proc: the
/// sign a test waits for before it interrupts work on that file (a hash, a zip).
/// - Parameter pid: the process; nil for this one.
public func holdsOpen(pid: Int32? = nil, _ matches: (String) -> Bool) -> Bool {
    let fds = "/proc/" + (pid.map(String.init) ?? "self") + "/fd"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
    return names.contains { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + name)).map(matches) ?? false
    }
}
