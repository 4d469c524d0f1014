/// `activity.token_updated`: ActivityKit gave the activity a (new) update token. The monitor
/// counts a rotation when it replaces an earlier one.
public struct ActivityTokenUpdated: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.activityTokenUpdated

    public var pushToken: PushToken

    public init(pushToken: PushToken) {
        self.pushToken = pushToken
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case pushToken = "push_token"
    }
    typealias Field = CodingKeys
}
