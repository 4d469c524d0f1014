/// RFC 3339 timestamps without Foundation's formatters: they are slow on Linux and lenient in
/// ways an ingest contract should not be.
public enum RFC3339 {
    /// Parses `2026-11-29T14:03:00Z`, `2026-11-29T14:03:00.250+01:00`, … into Unix seconds.
    public static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for i in start..<(start + count) {
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 9 else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
                  let om = digits(i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        default:
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Double(seconds) + fraction
    }

    /// Whether a date has an RFC 3339 form: years 0000–9999.
    public static func hasForm(_ unixSeconds: Double) -> Bool {
        (-62_167_219_200.0..<253_402_300_800.0).contains(unixSeconds)
    }

    /// Formats Unix seconds as UTC, with milliseconds only when the time has a fraction.
    public static func format(_ unixSeconds: Double) -> String {
        let millis = Int64((unixSeconds * 1000).rounded())
        var seconds = millis / 1000
        var ms = millis % 1000
        if ms < 0 { ms += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        let secondOfDay = Int(rest)
        // Written into one buffer: string concatenation cost ~7,000 instructions per date
        // (callgrind), and every stored event has two dates.
        return String(unsafeUninitializedCapacity: 40) { buffer in
            var i = 0
            func put(_ value: Int, _ width: Int) {
                var v = value
                for k in stride(from: width - 1, through: 0, by: -1) {
                    buffer[i + k] = UInt8(48 + v % 10)
                    v /= 10
                }
                i += width
            }
            func put(_ c: Unicode.Scalar) {
                buffer[i] = UInt8(ascii: c)
                i += 1
            }
            // Only years 0000-9999 have an RFC 3339 form; any other is written as its number.
            if (0...9999).contains(y) {
                put(y, 4)
            } else {
                for byte in pad(y, 4).utf8 { put(Unicode.Scalar(byte)) }
            }
            put("-"); put(m, 2); put("-"); put(d, 2)
            put("T"); put(secondOfDay / 3600, 2); put(":"); put(secondOfDay % 3600 / 60, 2); put(":"); put(secondOfDay % 60, 2)
            if ms != 0 { put("."); put(Int(ms), 3) }
            put("Z")
            return i
        }
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
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
