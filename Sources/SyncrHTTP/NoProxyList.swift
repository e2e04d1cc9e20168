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

    init(_ written: String) {
        self.written = written
    }

    /// Whether a request to `host` (as a URL gives it: an IPv6 address may be in brackets,
    /// with a zone) goes directly.
    func exempts(host: String) -> Bool {
        guard !written.isEmpty, !host.isEmpty else { return false }
        if written == "*" { return true }
        let name = Host(host)
        return entries.contains { name.matches($0) }
    }

    /// The entries, split at commas and blanks.
    private var entries: [Substring] {
        written.split { $0 == "," || $0 == " " || $0 == "\t" }
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
            if let bytes = Address.bytes(String(host), family: AF_INET) {
                self = .ipv4(bytes)
            } else if let bytes = Address.bytes(String(host), family: AF_INET6) {
                self = .ipv6(bytes)
            } else {
                self = .name(String(host.hasSuffix(".") ? host.dropLast() : host).lowercased())
            }
        }

        func matches(_ entry: Substring) -> Bool {
            switch self {
            case .name(let name): return Self.nameMatches(name, entry)
            case .ipv4(let address): return Address.inRange(address, entry, family: AF_INET)
            case .ipv6(let address): return Address.inRange(address, entry, family: AF_INET6)
            }
        }

        /// `example.com` or `.example.com` matches `example.com` and any host under it.
        private static func nameMatches(_ name: String, _ entry: Substring) -> Bool {
            var entry = entry
            if entry.hasSuffix(".") { entry = entry.dropLast() }
            if entry.hasPrefix(".") { entry = entry.dropFirst() }
            let domain = entry.lowercased()
            guard !domain.isEmpty else { return false }
            return name == domain || name.hasSuffix("." + domain)
        }
    }

    /// Addresses and ranges (`address/bits`) of one family, compared as bytes.
    private enum Address {
        static func bytes(_ text: String, family: Int32) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 16)
            guard inet_pton(family, text, &buffer) == 1 else { return nil }
            return Array(buffer.prefix(family == AF_INET ? 4 : 16))
        }

        /// Whether `address` is the entry's address, or in its range. As curl: a prefix length
        /// is decimal digits only, at most the address's bits; `/0` (or none) means the whole
        /// address.
        static func inRange(_ address: [UInt8], _ entry: Substring, family: Int32) -> Bool {
            var text = entry
            var bits = 0
            if let slash = text.firstIndex(of: "/") {
                let digits = text[text.index(after: slash)...]
                guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                      let value = Int(digits), value <= address.count * 8 else { return false }
                bits = value
                text = text[..<slash]
            }
            if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
            guard let network = bytes(String(text), family: family) else { return false }
            if bits == 0 { bits = address.count * 8 }
            return prefixEqual(address, network, bits: bits)
        }

        private static func prefixEqual(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
            let whole = bits / 8
            guard a.prefix(whole) == b.prefix(whole) else { return false }
            let rest = bits % 8
            guard rest > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - rest))
            return (a[whole] ^ b[whole]) & mask == 0
        }
    }
}
