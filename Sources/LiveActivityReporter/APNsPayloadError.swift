/// Why an APNs request could not be turned into its event (`push.sent`, `channel.created`).
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
    /// A broadcast (a push to a channel) with `aps.event` `start`: a channel updates and ends the
    /// activities subscribed to it, it starts none (the monitor refuses such a push).
    case startOnChannel
    /// APNs answered a channel create with a 2xx but no channel id was given (the answer's
    /// `apns-channel-id` header): the monitor refuses a created channel without its id.
    case missingChannelID

    public var description: String {
        switch self {
        case .notJSON(let detail): "the APNs payload is not a JSON object: \(detail)"
        case .missingAPS: "the APNs payload has no \"aps\" object"
        case .badEvent(let event):
            "aps.event must be \"start\", \"update\" or \"end\", not \(event.map { "\"\($0)\"" } ?? "missing")"
        case .badField(let path, let expected): "\(path) in the APNs payload must be \(expected)"
        case .missingBookingID:
            "a push-to-start (aps.event \"start\") needs a bookingID: the monitor refuses one without"
        case .startOnChannel:
            "a broadcast cannot start an activity (aps.event \"start\"): send a start push to a push-to-start token"
        case .missingChannelID:
            "APNs created the channel (2xx): pass the apns-channel-id header of its answer as channelID"
        }
    }
}
