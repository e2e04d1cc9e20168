import Testing
@testable import SyncrHTTP

@Suite("HTTPDate parsing (RFC 9110 §5.6.7)", .timeLimit(.minutes(10)))
struct HTTPDateTests {
    @Test("the three forms of the RFC example date give the same instant", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",    // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",   // obsolete RFC 850 form
        "Sun Nov  6 08:49:37 1994",         // ANSI C asctime() form
    ])
    func rfcExample(_ text: String) {
        #expect(HTTPDate.parse(text) == 784_111_777)
    }

    @Test("other valid dates", arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", Int64(0)),
        ("Sat, 01 Jan 2000 00:00:00 GMT", Int64(946_684_800)),
        ("Sat, 29 Feb 2020 12:00:00 GMT", Int64(1_582_977_600)),        // leap day
        ("Fri, 31 Dec 9999 23:59:59 GMT", Int64(253_402_300_799)),
        ("Mon, 01 Jan 1900 00:00:00 GMT", Int64(-2_208_988_800)),
        ("Sat, 31 Dec 2016 23:59:60 GMT", Int64(1_483_228_800)),        // leap second
        ("Sun, 06 NOV 1994 08:49:37 GMT", Int64(784_111_777)),          // month name in capitals
        ("Sun, 06 nov 1994 08:49:37 GMT", Int64(784_111_777)),
        ("Sun,  06  Nov  1994  08:49:37  GMT", Int64(784_111_777)),     // extra blanks
        ("Thursday, 01-Jan-70 00:00:00 GMT", Int64(0)),                 // two-digit year 70 -> 1970
        ("Saturday, 01-Jan-00 00:00:00 GMT", Int64(946_684_800)),       // two-digit year 00 -> 2000
        ("Sunday, 06-Nov-1994 08:49:37 GMT", Int64(784_111_777)),       // RFC 850 with four digits
        ("Sun Nov 06 08:49:37 1994", Int64(784_111_777)),               // asctime with a padded day
        ("Thu Jan  1 00:00:00 1970", Int64(0)),
    ])
    func valid(_ text: String, _ epoch: Int64) {
        #expect(HTTPDate.parse(text) == epoch)
    }

    @Test("garbage and broken dates are rejected", arguments: [
        "",
        "   ",
        "yesterday",
        "784111777",
        "Sun, 06 Nov 1994 08:49:37",          // no zone
        "Sun, 06 Nov 1994 08:49:37 UTC",      // zone must be GMT
        "Sun, 06 Nov 1994 08:49:37 gmt",      // GMT is case-sensitive
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06 Xyz 1994 08:49:37 GMT",      // unknown month
        "Sun, 00 Nov 1994 08:49:37 GMT",      // day 0
        "Sun, 32 Nov 1994 08:49:37 GMT",      // day 32
        "Sun, 06 Nov 1994 24:00:00 GMT",      // hour 24
        "Sun, 06 Nov 1994 08:60:00 GMT",      // minute 60
        "Sun, 06 Nov 1994 08:49:61 GMT",      // second 61
        "Sun, 06 Nov 1994 08:49 GMT",         // no seconds
        "Sun, 06 Nov 1994 08:49:37:00 GMT",
        "Sun, 06 Nov 1994 08:-1:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",        // two-digit year in the fixdate form
        "Sun, 06 Nov 1899 08:49:37 GMT",      // before 1900
        "Sun, 06 Nov 10000 08:49:37 GMT",
        "Sun, xx Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov 08:49:37 GMT",        // RFC 850 without year
        "Sunday, 06/Nov/94 08:49:37 GMT",
        "Sunday, 06-Nov-94 8h49 GMT",
        "Sun Nov  6 08:49:37",                // asctime without year
        "Sun Foo  6 08:49:37 1994",
        "Sun Nov 40 08:49:37 1994",
        "Sun Nov  6 08:49:37 year",
        "2024-01-01T00:00:00Z",               // ISO 8601 is not an HTTP-date
    ])
    func rejectsGarbage(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}

@Suite("RetryAfter (RFC 9110 §10.2.3)", .timeLimit(.minutes(10)))
struct RetryAfterTests {
    @Test("delay-seconds", arguments: [
        ("120", Int64(120)),
        ("0", Int64(0)),
        ("1", Int64(1)),
        ("  7 \r\n", Int64(7)),
        ("007", Int64(7)),
        ("86400", Int64(86_400)),
    ])
    func seconds(_ text: String, _ value: Int64) {
        #expect(RetryAfter(parsing: text) == .seconds(value))
    }

    @Test("an absurdly large delay-seconds stays huge instead of overflowing")
    func hugeSeconds() throws {
        let r = try #require(RetryAfter(parsing: "99999999999999999999999999"))
        guard case .seconds(let s) = r else {
            Issue.record("expected .seconds, got \(r)")
            return
        }
        #expect(s >= 999_999_999_999)
        #expect(r.delay(now: 0) >= 999_999_999_999)
    }

    // Regression (fixed; RetryAfter.swift, init(parsing:)): the value is "clamped" by keeping its first 12
    // characters, so a long run of leading zeros is read as 0 and a wait of 5 s becomes
    // an immediate retry (and "0000000000001000" becomes 0 instead of 1000).
    @Test("delay-seconds with many leading zeros keeps its value",
          arguments: [
              ("0000000000000005", Int64(5)),
              ("0000000000001000", Int64(1000)),
          ])
    func leadingZeros(_ text: String, _ value: Int64) {
        #expect(RetryAfter(parsing: text) == .seconds(value))
    }

    @Test("HTTP-date forms", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        " Sun, 06 Nov 1994 08:49:37 GMT\r\n",
    ])
    func dates(_ text: String) {
        #expect(RetryAfter(parsing: text) == .date(784_111_777))
    }

    @Test("neither seconds nor a date", arguments: [
        "", "  ", "-5", "+5", "1.5", "5s", "120 seconds", "0x10", "soon", "1e3",
        "Sun, 06 Nov 1994 08:49:37 UTC", "١٢٠",
    ])
    func garbage(_ text: String) {
        #expect(RetryAfter(parsing: text) == nil)
    }

    @Test("delay(now:) for seconds ignores the clock")
    func delaySeconds() {
        #expect(RetryAfter.seconds(120).delay(now: 0) == 120)
        #expect(RetryAfter.seconds(120).delay(now: 1_700_000_000) == 120)
        #expect(RetryAfter.seconds(0).delay(now: 1_700_000_000) == 0)
    }

    @Test("delay(now:) for a date counts from now", arguments: [
        (Int64(784_111_777 - 60), Int64(60)),
        (Int64(784_111_777 - 1), Int64(1)),
        (Int64(784_111_777), Int64(0)),
    ])
    func delayDate(_ now: Int64, _ expected: Int64) {
        #expect(RetryAfter.date(784_111_777).delay(now: now) == expected)
    }

    @Test("delay(now:) is never negative", arguments: [
        RetryAfter.date(784_111_777),
        RetryAfter.date(0),
        RetryAfter.date(-2_208_988_800),
        RetryAfter.seconds(-5),
        RetryAfter.seconds(Int64.min),
    ])
    func neverNegative(_ r: RetryAfter) {
        #expect(r.delay(now: 1_700_000_000) >= 0)
        #expect(r.delay(now: 784_111_777 + 1) >= 0)
    }
}
