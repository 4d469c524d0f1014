import JSON
import LiveActivityWire

extension JSONWriter {
    /// A date as the read API writes it: RFC 3339 UTC, or, for a date RFC 3339 has no form for
    /// (a timestamp sent in milliseconds is tens of thousands of years ahead), the number of
    /// Unix seconds as sent; null when absent.
    mutating func date(_ seconds: Double?) {
        guard let seconds else { return null() }
        if RFC3339.hasForm(seconds) { string(RFC3339.format(seconds)) } else { number(JSONNumber(seconds)) }
    }
}

extension RFC3339 {
    /// A date as the server writes it in a message: RFC 3339 UTC, or the number of Unix seconds
    /// where RFC 3339 has no form for it (`JSONWriter.date`; `format` traps on numbers past
    /// Int64 milliseconds, e.g. 1e300).
    static func text(_ seconds: Double) -> String {
        hasForm(seconds) ? format(seconds) : JSONNumber(seconds).description
    }
}
