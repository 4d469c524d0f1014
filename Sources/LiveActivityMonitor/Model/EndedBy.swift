/// Who ended an activity: the app, a push with `event: end`, or the system after 8 hours.
public enum EndedBy: String, Sendable, CaseIterable {
    case app, push, system
}
