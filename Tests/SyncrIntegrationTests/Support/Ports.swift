#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Errors from the socket helpers.
enum PortError: Error, CustomStringConvertible {
    case socket(operation: String, errno: Int32)
    case notAccepting(port: UInt16, after: Duration)

    var description: String {
        switch self {
        case .socket(let operation, let errno):
            return "\(operation) failed: \(String(cString: strerror(errno)))"
        case .notAccepting(let port, let after):
            return "nothing accepted connections on 127.0.0.1:\(port) within \(after)"
        }
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
///
/// Binds port 0 and closes the socket, so another process can take the port before the
/// caller does: callers that bind later must retry on "address in use" (see `Nginx`).
func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw PortError.socket(operation: "socket", errno: errno) }
    defer { close(fd) }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw PortError.socket(operation: "bind", errno: errno) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw PortError.socket(operation: "getsockname", errno: errno) }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
func isAccepting(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return connected == 0
}

/// Polls until `condition` holds, every 20 ms, for at most `timeout`.
/// - Returns: whether the condition held before the timeout.
func poll(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel chose, for a test that plays a
/// server at the socket level: `receiveBuffer` is set before it listens, so accepted sockets
/// inherit it. The caller closes it.
func listeningSocket(backlog: Int32, receiveBuffer: Int32? = nil) throws -> (socket: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw PortError.socket(operation: "socket", errno: errno) }
    if var size = receiveBuffer {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else {
        let code = errno
        close(fd)
        throw PortError.socket(operation: "bind and listen", errno: code)
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// Polls like `poll`, but on a thread of its own rather than in the concurrency pool, for a
/// moment that lasts only seconds: when other tests hold the pool's few threads (two on CI), a
/// polling task may not run for longer than that. `condition` can also act at once when it
/// holds (kill a process, say), from the same thread.
func pollOnItsOwnThread(timeout: Duration = .seconds(10), _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            let deadline = ContinuousClock.now + timeout
            while true {
                if condition() { return continuation.resume(returning: true) }
                if ContinuousClock.now >= deadline { return continuation.resume(returning: false) }
                usleep(10_000)
            }
        }
        thread.start()
    }
}

/// Whether a socket can be bound to the IPv6 loopback address (`::1`): not in a container or
/// kernel without IPv6, where a test of `[::1]` URLs has nothing to connect to.
func ipv6LoopbackAvailable() -> Bool {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    } == 0
}
