import Foundation

/// An APNs push token (an activity's update token, or a push-to-start token).
///
/// The raw token goes to the monitor, which keeps only a fingerprint of it. Everywhere else it
/// stays hidden: `description`, `debugDescription`, `dump` and string interpolation print
/// `PushToken(redacted, N bytes)`, so logging an event never leaks a token.
public struct PushToken: Sendable, Hashable, Encodable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable {
    /// The token as APNs takes it in `/3/device/<token>`: hex digits.
    public let hex: String

    /// A token as ActivityKit gives it (`pushTokenUpdates`, `pushToken`).
    public init(_ data: Data) {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0f)])
        }
        hex = String(decoding: bytes, as: UTF8.self)
    }

    /// A token as a backend stores it: hex digits. The monitor checks the format (a 422 names
    /// a malformed token without echoing it).
    public init(hex: String) {
        self.hex = hex
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    public var description: String { "PushToken(redacted, \(hex.utf8.count / 2) bytes)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
