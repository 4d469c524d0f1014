import Foundation
import LiveActivityWire

/// Dates on the wire: the monitor's own RFC 3339 form (UTC, milliseconds only when there is a
/// fraction), so a date reads back exactly as it was sent. Not Foundation's formatters: they
/// differ between Linux and Apple platforms, and `ISO8601FormatStyle` needs newer OS versions
/// than this library does.
enum WireDate {
    static func format(_ date: Date) -> String {
        RFC3339.format(date.timeIntervalSince1970)
    }

    /// The `JSONEncoder` strategy for every date of an event.
    static var strategy: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(format(date))
        }
    }
}
