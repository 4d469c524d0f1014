import LiveActivityWire

extension EventType {
    /// What a channel request asked of APNs; nil for the other types.
    var channelOperation: ChannelRequest.Operation? {
        switch self {
        case .channelCreated: .create
        case .channelDeleted: .delete
        default: nil
        }
    }
}
