#if canImport(Glibc)
import Glibc
#endif

/// A parsed `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter: Sendable, Equatable {
    case seconds(Int64)
    /// Seconds since the Unix epoch.
    case date(Int64)

    /// Parses a header value; nil when it is neither form.
    public init?(parsing text: String) {
        let s = text.trimmed
        if !s.isEmpty, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            // Too many digits for Int64 means "a very long time"; the caller caps the wait anyway.
            self = .seconds(Int64(s) ?? Int64.max)
            return
        }
        guard let epoch = HTTPDate.parse(s) else { return nil }
        self = .date(epoch)
    }

    /// How long to wait, in seconds, measured from `now` (Unix seconds); never negative.
    public func delay(now: Int64) -> Int64 {
        switch self {
        case .seconds(let s): return max(0, s)
        case .date(let d): return max(0, d - now)
        }
    }
}

/// HTTP-date parsing (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms
/// that recipients must still accept.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun",
                                 "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds since the Unix epoch, or nil.
    public static func parse(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var day: Int?, month: Int?, year: Int?, time: (Int, Int, Int)?
        if parts.count == 6, parts[5] == "GMT" {
            // Sun, 06 Nov 1994 08:49:37 GMT
            day = Int(parts[1]); month = monthIndex(parts[2]); year = Int(parts[3]); time = clock(parts[4])
        } else if parts.count == 4, parts[3] == "GMT" {
            // Sunday, 06-Nov-94 08:49:37 GMT
            let dmy = parts[1].split(separator: "-").map(String.init)
            guard dmy.count == 3 else { return nil }
            day = Int(dmy[0]); month = monthIndex(dmy[1])
            if let y = Int(dmy[2]) { year = dmy[2].count == 2 ? (y < 70 ? 2000 + y : 1900 + y) : y }
            time = clock(parts[2])
        } else if parts.count == 5 {
            // Sun Nov  6 08:49:37 1994
            month = monthIndex(parts[1]); day = Int(parts[2]); time = clock(parts[3]); year = Int(parts[4])
        } else {
            return nil
        }
        guard let d = day, let m = month, let y = year, let (hh, mm, ss) = time,
              (1...31).contains(d), (1900...9999).contains(y), hh < 24, mm < 60, ss < 61 else { return nil }
        var t = tm()
        t.tm_year = Int32(y - 1900)
        t.tm_mon = Int32(m)
        t.tm_mday = Int32(d)
        t.tm_hour = Int32(hh)
        t.tm_min = Int32(mm)
        t.tm_sec = Int32(ss)
        return Int64(timegm(&t))
    }

    private static func monthIndex(_ s: String) -> Int? { months.firstIndex(of: s.lowercased()) }

    private static func clock(_ s: String) -> (Int, Int, Int)? {
        let f = s.split(separator: ":").map { Int($0) }
        guard f.count == 3, let h = f[0], let m = f[1], let sec = f[2], h >= 0, m >= 0, sec >= 0 else { return nil }
        return (h, m, sec)
    }
}
