import Foundation

/// Dates on the wire: RFC 3339 in UTC, with milliseconds only when there is a fraction — the
/// form the monitor itself writes, so a date reads back exactly as it was sent. Plain
/// arithmetic, because Foundation's formatters differ between Linux and Apple platforms and
/// `ISO8601FormatStyle` needs newer OS versions than this library does.
enum WireDate {
    static func format(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = millis / 1000
        var ms = millis % 1000
        if ms < 0 { ms += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        var out = pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
        out += "T" + pad(rest / 3600, 2) + ":" + pad(rest % 3600 / 60, 2) + ":" + pad(rest % 60, 2)
        if ms != 0 { out += "." + pad(ms, 3) }
        return out + "Z"
    }

    /// The `JSONEncoder` strategy for every date of an event.
    static var strategy: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(format(date))
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
