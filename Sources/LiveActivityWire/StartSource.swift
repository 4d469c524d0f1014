/// How an activity came to be (`activity.started`'s `source`): requested by the app, or started
/// remotely by a push.
public enum StartSource: String, Sendable, Hashable, Encodable, CaseIterable {
    case app
    case pushToStart = "push_to_start"
}
