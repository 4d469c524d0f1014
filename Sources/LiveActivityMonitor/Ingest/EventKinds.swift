import LiveActivityWire

/// A set of event types, as the schema says where a field is allowed or required. `push.sent`
/// counts as two: a push-to-start (`event: "start"`) requires other fields than an update or
/// an end (no `activity_id` yet, a `booking_id` instead).
struct EventKinds: OptionSet, Sendable, Hashable {
    let rawValue: UInt16

    init(rawValue: UInt16) { self.rawValue = rawValue }

    static let activityStarted = EventKinds(rawValue: 1 << 0)
    static let activityUpdated = EventKinds(rawValue: 1 << 1)
    static let activityTokenUpdated = EventKinds(rawValue: 1 << 2)
    static let activityStale = EventKinds(rawValue: 1 << 3)
    static let activityEnded = EventKinds(rawValue: 1 << 4)
    static let activityDismissed = EventKinds(rawValue: 1 << 5)
    /// A `push.sent` whose `event` is `update` or `end` (or is missing or invalid).
    static let pushUpdateOrEnd = EventKinds(rawValue: 1 << 6)
    /// A `push.sent` whose `event` is `start`.
    static let pushToStart = EventKinds(rawValue: 1 << 7)
    static let activityObserved = EventKinds(rawValue: 1 << 8)
    static let devicePushToStartToken = EventKinds(rawValue: 1 << 9)
    /// A `push.sent` to a channel (`channel_id`, version 2): an update or an end broadcast to
    /// the activities subscribed to it, naming no activity and no token.
    static let pushBroadcast = EventKinds(rawValue: 1 << 10)
    static let channelCreated = EventKinds(rawValue: 1 << 11)
    static let channelDeleted = EventKinds(rawValue: 1 << 12)
    /// A call to the channel management API (version 2): it names a channel, no activity.
    static let channelRequest: EventKinds = [.channelCreated, .channelDeleted]

    static let pushSent: EventKinds = [.pushUpdateOrEnd, .pushToStart, .pushBroadcast]
    static let all: EventKinds = [.activityStarted, .activityUpdated, .activityTokenUpdated, .activityStale,
                                  .activityEnded, .activityDismissed, .pushSent, .activityObserved,
                                  .devicePushToStartToken, .channelRequest]

    /// Every kind of `type`: both of `push.sent`'s.
    init(_ type: EventType) {
        self = switch type {
        case .activityStarted: .activityStarted
        case .activityUpdated: .activityUpdated
        case .activityTokenUpdated: .activityTokenUpdated
        case .activityStale: .activityStale
        case .activityEnded: .activityEnded
        case .activityDismissed: .activityDismissed
        case .pushSent: .pushSent
        case .activityObserved: .activityObserved
        case .devicePushToStartToken: .devicePushToStartToken
        case .channelCreated: .channelCreated
        case .channelDeleted: .channelDeleted
        }
    }

    /// The one kind of an event of `type` whose `event` field reads `push` (nil: absent or
    /// invalid), `broadcast` when it names a channel.
    init(_ type: EventType, push: PushKind?, broadcast: Bool = false) {
        if type == .pushSent {
            self = push == .start ? .pushToStart : broadcast ? .pushBroadcast : .pushUpdateOrEnd
        } else {
            self.init(type)
        }
    }
}
