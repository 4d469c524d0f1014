import Foundation
import LiveActivityWire

/// Dates on the wire: the monitor's own RFC 3339 form (UTC, milliseconds only when there is a
/// fraction), so a date reads back exactly as it was sent; a date RFC 3339 has no form for
/// (outside years 0000–9999: an `aps.timestamp` sent in milliseconds is tens of thousands of
/// years ahead) as its number of Unix seconds, as the monitor takes and serves it. Not
/// Foundation's formatters: they differ between Linux and Apple platforms, and
/// `ISO8601FormatStyle` needs newer OS versions than this library does.
enum WireDate {
    /// The `JSONEncoder` strategy for every date of an event.
    static var strategy: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            let seconds = date.timeIntervalSince1970
            if RFC3339.hasForm(seconds) { try container.encode(RFC3339.format(seconds)) } else { try container.encode(seconds) }
        }
    }
}
