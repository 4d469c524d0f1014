/// The `aps.event` of a push (`push.sent`'s `event`).
public enum PushKind: String, Sendable, Hashable, Encodable, CaseIterable {
    case start, update, end
}
