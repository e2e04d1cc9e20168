#if canImport(Glibc)
import Glibc
#endif

/// A `no_proxy` list: the hosts a request goes to directly, past the proxy from the
/// environment. syncr decides this itself and tells curl the outcome (`ProxyEnvironment`), so
/// that an error can name the proxy a request went through; the rules are libcurl's
/// (`lib/noproxy.c`, 8.x):
///
/// - `*` alone exempts every host;
/// - entries are separated by commas (blanks around them are passed over; a blank alone
///   separates too, as curl 7.x allowed);
/// - a host name matches itself and its subdomains: `example.com` and `.example.com` both
///   match `example.com` and `www.example.com`, never `notexample.com` (case ignored, one
///   trailing dot ignored on either side);
/// - a host that is an IPv4 or IPv6 address matches an address entry, or a range written
///   `10.0.0.0/8`, `fd00::/8` (an address is never matched as a name: `10.0.0.1` does not
///   match `.0.1`).
///
/// Two differences from the curl installed here (7.88): its IPv6 ranges never matched (it
/// compared the address as a name, and its mask test was inverted: both fixed in curl 8), and
/// an entry in brackets as a URL writes it (`[::1]`, `[fd00::]/8`) is read as the address, which
/// curl ignores: someone who wrote it meant the address.
struct NoProxyList: Sendable, Equatable {
    /// The list as written.
    let written: String
    /// `written` is `*`: every host goes directly.
    private let exemptsAll: Bool
    /// The entries, each read once as the list is made: a request's check compares bytes and
    /// strings, and neither splits the list nor parses an address again.
    private let entries: [Entry]

    init(_ written: String) {
        self.written = written
        exemptsAll = written == "*"
        entries = exemptsAll ? [] : written.split { $0 == "," || $0 == " " || $0 == "\t" }.map(Entry.init)
    }

    /// Whether a request to `host` (as a URL gives it: an IPv6 address may be in brackets,
    /// with a zone) goes directly.
    func exempts(host: String) -> Bool {
        guard !written.isEmpty, !host.isEmpty else { return false }
        if exemptsAll { return true }
        switch Host(host) {
        case .name(let name): return entries.contains { $0.domain.map { Self.nameMatches(name, domain: $0) } ?? false }
        case .ipv4(let address): return entries.contains { $0.ipv4?.contains(address) ?? false }
        case .ipv6(let address): return entries.contains { $0.ipv6?.contains(address) ?? false }
        }
    }

    /// `example.com` or `.example.com` matches `example.com` and any host under it.
    private static func nameMatches(_ name: String, domain: String) -> Bool {
        name == domain || name.hasSuffix("." + domain)
    }

    /// One entry as each kind of host reads it: a host name as a domain, an address as an
    /// address or range of its family (an entry is never an address of both families).
    private struct Entry: Sendable, Equatable {
        /// Lowercased, one leading and one trailing dot dropped; nil when nothing is left.
        let domain: String?
        let ipv4: Network?
        let ipv6: Network?

        init(_ written: Substring) {
            var entry = written
            if entry.hasSuffix(".") { entry = entry.dropLast() }
            if entry.hasPrefix(".") { entry = entry.dropFirst() }
            domain = entry.isEmpty ? nil : entry.lowercased()
            ipv4 = Network(written, family: AF_INET)
            ipv6 = Network(written, family: AF_INET6)
        }
    }

    /// A request's host, as an address when it is one.
    private enum Host {
        case name(String)
        case ipv4([UInt8])
        case ipv6([UInt8])

        init(_ written: String) {
            var host = Substring(written)
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            // A zone (`fe80::1%eth0`) names the interface, not the address.
            if host.contains(":"), let percent = host.firstIndex(of: "%") { host = host[..<percent] }
            if let bytes = Network.bytes(String(host), family: AF_INET) {
                self = .ipv4(bytes)
            } else if let bytes = Network.bytes(String(host), family: AF_INET6) {
                self = .ipv6(bytes)
            } else {
                self = .name(String(host.hasSuffix(".") ? host.dropLast() : host).lowercased())
            }
        }
    }

    /// An address entry of one family, or a range of them (`address/bits`), compared as bytes.
    private struct Network: Sendable, Equatable {
        let bytes: [UInt8]
        /// Leading bits of `bytes` an address must share.
        let bits: Int

        /// The entry read as curl reads it for an address of `family`; nil when it matches no
        /// such address. A prefix length is decimal digits only, at most the address's bits;
        /// `/0` (or none) means the whole address.
        init?(_ entry: Substring, family: Int32) {
            let size = family == AF_INET ? 4 : 16
            var text = entry
            var bits = 0
            if let slash = text.firstIndex(of: "/") {
                let digits = text[text.index(after: slash)...]
                guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                      let value = Int(digits), value <= size * 8 else { return nil }
                bits = value
                text = text[..<slash]
            }
            if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
            guard let bytes = Self.bytes(String(text), family: family) else { return nil }
            self.bytes = bytes
            self.bits = bits == 0 ? size * 8 : bits
        }

        static func bytes(_ text: String, family: Int32) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 16)
            guard inet_pton(family, text, &buffer) == 1 else { return nil }
            return Array(buffer.prefix(family == AF_INET ? 4 : 16))
        }

        /// Whether `address` (of this family) is this one, or in its range.
        func contains(_ address: [UInt8]) -> Bool {
            let whole = bits / 8
            guard address.prefix(whole) == bytes.prefix(whole) else { return false }
            let rest = bits % 8
            guard rest > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - rest))
            return (address[whole] ^ bytes[whole]) & mask == 0
        }
    }
}
