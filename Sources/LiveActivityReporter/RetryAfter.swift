import Foundation

/// An HTTP `Retry-After` header (RFC 9110, 10.2.3): seconds to wait, or the date to wait until.
enum RetryAfter {
    /// The wait the header asks for, in seconds from `now`; nil when it is neither form.
    static func seconds(_ value: String, now: Date = Date()) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = TimeInterval(text), seconds.isFinite { return max(seconds, 0) }
        guard let date = httpDate(text) else { return nil }
        return max(date.timeIntervalSince(now), 0)
    }

    /// An IMF-fixdate, `Wed, 21 Oct 2015 07:28:00 GMT`: the form servers send (the obsolete
    /// RFC 850 and asctime forms are not read).
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
