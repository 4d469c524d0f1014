import LiveActivityWire

extension EventType {
    /// Whether events of this type may carry `activity_id`, `booking_id` and
    /// `attributes_type`: every type but the channel management results.
    public var namesActivity: Bool {
        switch self {
        case .channelCreated, .channelDeleted: false
        default: true
        }
    }
}
