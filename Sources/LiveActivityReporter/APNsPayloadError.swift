/// Why an APNs payload could not be turned into a `push.sent` event.
public enum APNsPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The payload is not a JSON object.
    case notJSON(String)
    /// There is no `aps` object.
    case missingAPS
    /// `aps.event` is missing or not `start`, `update` or `end`.
    case badEvent(String?)
    /// A field of the payload has the wrong type, e.g. a string `aps.timestamp`: the field's
    /// path and what it must be.
    case badField(String, expected: String)
    /// A push-to-start (`aps.event` `start`) without a booking id: the monitor refuses it (the
    /// new activity has no id yet, so the booking is how it is found).
    case missingBookingID

    public var description: String {
        switch self {
        case .notJSON(let detail): "the APNs payload is not a JSON object: \(detail)"
        case .missingAPS: "the APNs payload has no \"aps\" object"
        case .badEvent(let event):
            "aps.event must be \"start\", \"update\" or \"end\", not \(event.map { "\"\($0)\"" } ?? "missing")"
        case .badField(let path, let expected): "\(path) in the APNs payload must be \(expected)"
        case .missingBookingID:
            "a push-to-start (aps.event \"start\") needs a bookingID: the monitor refuses one without"
        }
    }
}
